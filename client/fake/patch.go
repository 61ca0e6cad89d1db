package fake

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	"github.com/kubeloop/kubeloop/client"
)

// decodeJSON decodes an object as the API server stores it (integers as
// int64).
func decodeJSON(data []byte) (map[string]any, error) {
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return u.Object, nil
}

// Patch applies patch to the stored object like the API server: JSON
// patch, merge patch, strategic merge patch (built-in kinds only) and apply
// patch (simplified server-side apply, see Apply).
func (c *Client) Patch(_ context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	gvk, err := c.resolve("patch", obj, nsOf(obj), nameOf(obj))
	if err != nil {
		return err
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	if patch == nil {
		return opError("patch", gvk, ns, name, fmt.Errorf("patch is nil"))
	}
	data, err := patch.Data(obj)
	if err != nil {
		return opError("patch", gvk, ns, name, err)
	}
	o := (&client.PatchOptions{}).ApplyOptions(opts)
	if err := checkPatchOptions(patch.Type(), o); err != nil {
		return opError("patch", gvk, ns, name, err)
	}
	dryRun := len(o.DryRun) > 0
	c.mu.Lock()
	defer c.mu.Unlock()
	var result map[string]any
	if patch.Type() == types.ApplyPatchType {
		result, err = c.applyData(gvk, data, o.FieldManager, o.Force != nil && *o.Force, dryRun, false)
	} else {
		result, err = c.patch(gvk, c.keyFor(gvk, ns, name), patch.Type(), data, modeMain, dryRun, orDefault(o.FieldManager))
	}
	if err != nil {
		return opError("patch", gvk, ns, name, err)
	}
	return opError("patch", gvk, ns, name, c.fromMap(result, obj, gvk))
}

func checkPatchOptions(pt types.PatchType, o *client.PatchOptions) error {
	if pt == types.ApplyPatchType && o.FieldManager == "" {
		return fmt.Errorf("an apply patch needs a field owner (client.FieldOwner or Options.FieldOwner)")
	}
	if pt != types.ApplyPatchType && o.Force != nil {
		return fmt.Errorf("ForceOwnership is only valid for apply patches, not %s", pt)
	}
	return nil
}

// patch applies a non-apply patch to the object at key. Caller holds mu.
func (c *Client) patch(gvk schema.GroupVersionKind, key client.ObjectKey, pt types.PatchType, data []byte, mode updateMode, dryRun bool, manager string) (map[string]any, error) {
	old := c.stored(gvk.GroupKind(), key)
	if old == nil {
		return nil, notFound(c.groupResource(gvk), key.Name)
	}
	oldJSON, err := json.Marshal(old)
	if err != nil {
		return nil, err
	}
	var out []byte
	if pt == types.StrategicMergePatchType {
		typed, ok := c.builtInType(gvk)
		if !ok {
			return nil, unsupportedPatch(pt)
		}
		if out, err = strategicpatch.StrategicMergePatch(oldJSON, data, typed); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	} else if out, err = applyJSONPatch(pt, oldJSON, data); err != nil {
		return nil, err
	}
	next, err := decodeJSON(out)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return c.update(gvk, key, next, mode, dryRun, manager)
}

// applyJSONPatch applies a JSON patch or a merge patch to doc.
func applyJSONPatch(pt types.PatchType, doc, data []byte) ([]byte, error) {
	switch pt {
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(data)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		out, err := p.Apply(doc)
		if err != nil {
			return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 422,
				Reason: metav1.StatusReasonInvalid, Message: err.Error()}}
		}
		return out, nil
	case types.MergePatchType:
		out, err := jsonpatch.MergePatch(doc, data)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return out, nil
	}
	return nil, unsupportedPatch(pt)
}

func unsupportedPatch(pt types.PatchType) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 415, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format - patch type %s is not supported for this kind", pt),
	}}
}

// Apply is a simplified server-side apply: each field path (maps walked,
// lists whole) is owned by the last manager that applied or wrote it; an
// apply that changes a field another manager owns fails with a 409
// conflict unless ForceOwnership is set; fields a manager stops applying
// are removed. The object is created when missing. managedFields are not
// kept on the object.
func (c *Client) Apply(_ context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	at, err := client.ApplyTargetOf(obj)
	if err != nil {
		return err
	}
	o := (&client.ApplyOptions{}).ApplyOptions(opts)
	if o.FieldManager == "" {
		return opError("apply", at.GVK, at.Namespace, at.Name, fmt.Errorf("a field owner is required (client.FieldOwner or Options.FieldOwner)"))
	}
	if at.Namespace == "" && c.namespaced(at.GVK, "") {
		return opError("apply", at.GVK, at.Namespace, at.Name, client.ErrNamespaceRequired)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	result, err := c.applyData(at.GVK, at.Data, o.FieldManager, o.Force != nil && *o.Force, len(o.DryRun) > 0, false)
	if err != nil {
		return opError("apply", at.GVK, at.Namespace, at.Name, err)
	}
	data, err := json.Marshal(result)
	if err != nil {
		return opError("apply", at.GVK, at.Namespace, at.Name, err)
	}
	return opError("apply", at.GVK, at.Namespace, at.Name, json.Unmarshal(data, obj))
}

// applyData applies an apply configuration (JSON or YAML) to the object,
// or with status to its status subresource. Field ownership is kept apart
// for the two, as the API server keeps managedFields per subresource: an
// apply of one never drops the fields a manager applied to the other.
// Caller holds mu.
func (c *Client) applyData(gvk schema.GroupVersionKind, data []byte, manager string, force, dryRun, status bool) (map[string]any, error) {
	jsonData, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	cfg, err := decodeJSON(jsonData)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	cu := metaOf(cfg)
	key := c.keyFor(gvk, cu.GetNamespace(), cu.GetName())
	// inScope tells the field paths this apply manages.
	inScope := func(string) bool { return true }
	mode := modeMain
	switch {
	case status:
		inScope = isStatusPath
		mode = modeStatus
		cfg = map[string]any{"metadata": cfg["metadata"], "status": cfg["status"]}
	case c.hasStatus(gvk.GroupKind()):
		inScope = func(p string) bool { return !isStatusPath(p) }
		delete(cfg, "status")
	}
	old := c.stored(gvk.GroupKind(), key)
	if old == nil {
		if status {
			return nil, notFound(c.groupResource(gvk), key.Name)
		}
		return c.create(gvk, &unstructured.Unstructured{Object: cfg}, dryRun, manager)
	}
	id := objectID{gk: gvk.GroupKind(), key: key}
	owners := c.owners[id]
	want := leaves(cfg)
	if status {
		for p := range want {
			if !isStatusPath(p) {
				delete(want, p) // a status apply ignores metadata, like the server
			}
		}
	}
	have := leaves(old)
	var causes []metav1.StatusCause
	for p, v := range want {
		if o := owners[p]; o != "" && o != manager && !reflect.DeepEqual(have[p], v) {
			causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict,
				Message: fmt.Sprintf("conflict with %q", o), Field: dotted(p)})
		}
	}
	if len(causes) > 0 && !force {
		sort.Slice(causes, func(i, j int) bool { return causes[i].Field < causes[j].Field })
		msg := fmt.Sprintf("Apply failed with 1 conflict: %s: %s", causes[0].Message, causes[0].Field)
		if len(causes) > 1 {
			lines := make([]string, len(causes))
			for i, cause := range causes {
				lines[i] = cause.Message + ": " + cause.Field
			}
			msg = fmt.Sprintf("Apply failed with %d conflicts: %s", len(causes), strings.Join(lines, "; "))
		}
		return nil, apierrors.NewApplyConflict(causes, msg)
	}
	merged := deepCopy(old)
	for p, v := range want {
		setPath(merged, p, deepCopyValue(v))
	}
	var dropped []string
	for p, o := range owners {
		if _, still := want[p]; o == manager && !still && inScope(p) {
			unsetPath(merged, p)
			dropped = append(dropped, p)
		}
	}
	metaOf(merged).SetResourceVersion(cu.GetResourceVersion())
	result, err := c.update(gvk, key, merged, mode, dryRun, manager)
	if err != nil || dryRun {
		return result, err
	}
	if c.owners[id] == nil {
		c.owners[id] = map[string]string{}
	}
	for p := range want {
		c.owners[id][p] = manager
	}
	for _, p := range dropped {
		delete(c.owners[id], p)
	}
	return result, nil
}

func isStatusPath(p string) bool { return p == "status" || strings.HasPrefix(p, "status"+sep) }

func dotted(p string) string { return "." + strings.ReplaceAll(p, sep, ".") }

func setPath(m map[string]any, p string, v any) {
	parts := strings.Split(p, sep)
	for _, k := range parts[:len(parts)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

func unsetPath(m map[string]any, p string) {
	parts := strings.Split(p, sep)
	for _, k := range parts[:len(parts)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, parts[len(parts)-1])
}
