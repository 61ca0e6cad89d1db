package fake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake/internal/fieldowner"
	"github.com/kubeloop/kubeloop/client/fake/internal/objmap"
)

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
	return opError("patch", gvk, ns, name, objmap.Into(result, obj, gvk))
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
		return nil, notFound(c.kinds.GroupResource(gvk), key.Name)
	}
	next, err := objmap.Patch(old, pt, data, c.kinds.BuiltIn(gvk))
	if err != nil {
		return nil, err
	}
	return c.update(gvk, key, next, mode, dryRun, manager)
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
	return c.apply("apply", obj, at, (&client.ApplyOptions{}).ApplyOptions(opts), "")
}

// apply is Apply, and with sub the subresource's Apply (only "status"
// applies), after they found at. Caller does not hold mu.
func (c *Client) apply(verb string, obj runtime.ApplyConfiguration, at client.ApplyTarget, o *client.ApplyOptions, sub string) error {
	fail := func(err error) error { return opError(verb, at.GVK, at.Namespace, at.Name, err) }
	switch {
	case o.FieldManager == "":
		return fail(errors.New("a field owner is required (client.FieldOwner or Options.FieldOwner)"))
	case at.Namespace == "" && c.kinds.Namespaced(at.GVK, ""):
		return fail(client.ErrNamespaceRequired)
	case sub == "scale":
		return fail(fmt.Errorf("apply of the scale subresource: %w by the fake client", client.ErrNotSupported))
	case sub != "" && (sub != "status" || !c.kinds.HasStatus(at.GVK.GroupKind())):
		return fail(c.subNotFound(at.GVK, sub, at.Name))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	result, err := c.applyData(at.GVK, at.Data, o.FieldManager, o.Force != nil && *o.Force, len(o.DryRun) > 0, sub != "")
	if err != nil {
		return fail(err)
	}
	data, err := json.Marshal(result)
	if err != nil {
		return fail(err)
	}
	return fail(json.Unmarshal(data, obj))
}

// applyData applies an apply configuration (JSON or YAML) to the object,
// or with status to its status subresource (see fieldowner). The object
// is created when missing, unless status. Caller holds mu.
func (c *Client) applyData(gvk schema.GroupVersionKind, data []byte, manager string, force, dryRun, status bool) (map[string]any, error) {
	jsonData, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	cfg, err := objmap.DecodeJSON(jsonData)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	cu := objmap.Meta(cfg)
	key := c.keyFor(gvk, cu.GetNamespace(), cu.GetName())
	old := c.stored(gvk.GroupKind(), key)
	if old == nil && status {
		return nil, notFound(c.kinds.GroupResource(gvk), key.Name)
	}
	id := objectID{gk: gvk.GroupKind(), key: key}
	req := fieldowner.Request{Manager: manager, Force: force, Status: status, StatusSubresource: c.kinds.HasStatus(gvk.GroupKind())}
	merged, commit, err := c.owners.Apply(id, old, cfg, req)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return c.create(gvk, &unstructured.Unstructured{Object: merged}, dryRun, manager)
	}
	mode := modeMain
	if status {
		mode = modeStatus
	}
	objmap.Meta(merged).SetResourceVersion(cu.GetResourceVersion())
	result, err := c.update(gvk, key, merged, mode, dryRun, manager)
	if err != nil || dryRun {
		return result, err
	}
	commit()
	return result, nil
}
