package fake

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake/internal/objmap"
)

// defaultManager is the field manager of writes that name none.
const defaultManager = "fake-client"

// seededRV is the resourceVersion of a WithObjects object that has none,
// controller-runtime's fake's "999" (tests compare against it).
const seededRV = 999

// add stores a WithObjects object as is: status, uid and
// creationTimestamp kept (none assigned, as in controller-runtime's fake);
// resourceVersion kept when it is a number, else "999", which is also
// written back to obj, as controller-runtime's fake does (a test comparing
// a seeded object with what the client returns sees the same version).
func (c *Client) add(obj client.Object) error {
	gvk, err := c.resolve("add", obj, obj.GetNamespace(), obj.GetName())
	if err != nil {
		return fmt.Errorf("fake: WithObjects: %w", err)
	}
	m, err := objmap.ToMap(obj, gvk)
	if err != nil {
		return fmt.Errorf("fake: WithObjects: %w", opError("add", gvk, obj.GetNamespace(), obj.GetName(), err))
	}
	key := c.keyFor(gvk, obj.GetNamespace(), obj.GetName())
	if c.stored(gvk.GroupKind(), key) != nil {
		return fmt.Errorf("fake: WithObjects: %w", opError("add", gvk, key.Namespace, key.Name, errors.New("added twice")))
	}
	u := objmap.Meta(m)
	if key.Namespace == "" {
		u.SetNamespace("") // cluster-scoped: the server drops it
	}
	rv, ok := objmap.ParseRV(u.GetResourceVersion())
	if !ok {
		rv = seededRV
		u.SetResourceVersion(strconv.FormatUint(rv, 10))
		obj.SetResourceVersion(u.GetResourceVersion())
	}
	c.rv = max(c.rv, rv)
	c.put(gvk.GroupKind(), key, m)
	return nil
}

// Create stores obj with a new UID, creationTimestamp and resourceVersion
// (and a generated name for generateName), like the API server.
func (c *Client) Create(_ context.Context, obj client.Object, opts ...client.CreateOption) error {
	name := nameOf(obj)
	if !isNil(obj) && name == "" {
		name = obj.GetGenerateName()
	}
	gvk, err := c.resolve("create", obj, nsOf(obj), name)
	if err != nil {
		return err
	}
	if _, ok := obj.(*metav1.PartialObjectMetadata); ok {
		return opError("create", gvk, obj.GetNamespace(), name, fmt.Errorf("metadata-only objects: %w; use a typed or unstructured object", client.ErrNotSupported))
	}
	o := (&client.CreateOptions{}).ApplyOptions(opts)
	c.mu.Lock()
	defer c.mu.Unlock()
	m, err := c.create(gvk, obj, len(o.DryRun) > 0, orDefault(o.FieldManager))
	if err != nil {
		return opError("create", gvk, obj.GetNamespace(), name, err)
	}
	return opError("create", gvk, obj.GetNamespace(), name, objmap.Into(m, obj, gvk))
}

// create is Create under mu, returning the stored map.
func (c *Client) create(gvk schema.GroupVersionKind, obj client.Object, dryRun bool, manager string) (map[string]any, error) {
	if obj.GetResourceVersion() != "" {
		return nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	m, err := objmap.ToMap(obj, gvk)
	if err != nil {
		return nil, err
	}
	u := objmap.Meta(m)
	if u.GetName() == "" {
		u.SetName(generateName(u.GetGenerateName()))
	}
	key := c.keyFor(gvk, u.GetNamespace(), u.GetName())
	if !c.kinds.Namespaced(gvk, key.Namespace) {
		u.SetNamespace("")
	}
	if c.stored(gvk.GroupKind(), key) != nil {
		return nil, apierrors.NewAlreadyExists(c.kinds.GroupResource(gvk), key.Name)
	}
	u.SetUID(uuid.NewUUID())
	u.SetCreationTimestamp(metav1.NewTime(time.Now().Truncate(time.Second)))
	u.SetDeletionTimestamp(nil)
	u.SetDeletionGracePeriodSeconds(nil)
	u.SetGeneration(0)
	if c.kinds.Generation(gvk.GroupKind()) {
		u.SetGeneration(1)
	}
	if !c.keepManaged {
		u.SetManagedFields(nil)
	}
	if c.kinds.HasStatus(gvk.GroupKind()) {
		delete(m, "status")
	}
	if dryRun {
		return m, nil
	}
	u.SetResourceVersion(c.nextRV())
	c.put(gvk.GroupKind(), key, m)
	c.owners.Wrote(objectID{gk: gvk.GroupKind(), key: key}, nil, m, manager)
	return m, nil
}

// Update replaces the stored object. A stale resourceVersion is a 409
// conflict; the status of kinds with a status subresource is kept.
func (c *Client) Update(_ context.Context, obj client.Object, opts ...client.UpdateOption) error {
	gvk, err := c.resolve("update", obj, nsOf(obj), nameOf(obj))
	if err != nil {
		return err
	}
	if _, ok := obj.(*metav1.PartialObjectMetadata); ok {
		return opError("update", gvk, obj.GetNamespace(), obj.GetName(), fmt.Errorf("metadata-only objects: %w; use Patch", client.ErrNotSupported))
	}
	o := (&client.UpdateOptions{}).ApplyOptions(opts)
	c.mu.Lock()
	defer c.mu.Unlock()
	next, err := objmap.ToMap(obj, gvk)
	if err != nil {
		return opError("update", gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	if err := c.checkUnconditional(gvk, next); err != nil {
		return opError("update", gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	m, err := c.update(gvk, c.keyFor(gvk, obj.GetNamespace(), obj.GetName()), next, modeMain, len(o.DryRun) > 0, orDefault(o.FieldManager))
	if err != nil {
		return opError("update", gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	return opError("update", gvk, obj.GetNamespace(), obj.GetName(), objmap.Into(m, obj, gvk))
}

// checkUnconditional refuses an update without resourceVersion for custom
// resources, which (unlike most built-in kinds) do not allow
// unconditional updates.
func (c *Client) checkUnconditional(gvk schema.GroupVersionKind, next map[string]any) error {
	if objmap.Meta(next).GetResourceVersion() != "" {
		return nil
	}
	if c.kinds.BuiltIn(gvk) != nil {
		return nil
	}
	return apierrors.NewInvalid(gvk.GroupKind(), objmap.Meta(next).GetName(), field.ErrorList{
		field.Invalid(field.NewPath("metadata", "resourceVersion"), "", "must be specified for an update")})
}

type updateMode int

const (
	modeMain   updateMode = iota // spec and metadata; status kept for status kinds
	modeStatus                   // status only
)

// systemFields are metadata the API server owns: an update cannot change them.
var systemFields = []string{"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "namespace", "name"}

// update replaces the stored object at key with next under the API
// server's rules. Caller holds mu.
func (c *Client) update(gvk schema.GroupVersionKind, key client.ObjectKey, next map[string]any, mode updateMode, dryRun bool, manager string) (map[string]any, error) {
	gr := c.kinds.GroupResource(gvk)
	old := c.stored(gvk.GroupKind(), key)
	if old == nil {
		return nil, notFound(gr, key.Name)
	}
	oldMeta := objmap.Meta(old)
	if rv := objmap.Meta(next).GetResourceVersion(); rv != "" && rv != oldMeta.GetResourceVersion() {
		return nil, apierrors.NewConflict(gr, key.Name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	var merged map[string]any
	switch mode {
	case modeStatus:
		merged = objmap.DeepCopy(old)
		objmap.SetOrDelete(merged, "status", next["status"])
	default:
		merged = objmap.DeepCopy(next)
		mergedMD, _ := merged["metadata"].(map[string]any)
		if mergedMD == nil {
			mergedMD = map[string]any{}
			merged["metadata"] = mergedMD
		}
		oldMD, _ := old["metadata"].(map[string]any)
		for _, f := range systemFields {
			objmap.SetOrDelete(mergedMD, f, objmap.DeepCopyValue(oldMD[f]))
		}
		if c.kinds.HasStatus(gvk.GroupKind()) {
			objmap.SetOrDelete(merged, "status", objmap.DeepCopyValue(old["status"]))
		}
	}
	merged["apiVersion"], merged["kind"] = old["apiVersion"], old["kind"]
	mu := objmap.Meta(merged)
	mu.SetResourceVersion(oldMeta.GetResourceVersion())
	if oldMeta.GetDeletionTimestamp() != nil {
		if added := newItems(oldMeta.GetFinalizers(), mu.GetFinalizers()); len(added) > 0 {
			return nil, apierrors.NewInvalid(gvk.GroupKind(), key.Name, field.ErrorList{field.Forbidden(field.NewPath("metadata", "finalizers"),
				fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %q", added))})
		}
	}
	if reflect.DeepEqual(merged, old) {
		return old, nil // no change: the API server keeps the resourceVersion
	}
	if mode == modeMain && c.kinds.Generation(gvk.GroupKind()) && specChanged(old, merged) {
		mu.SetGeneration(oldMeta.GetGeneration() + 1)
	}
	if dryRun {
		return merged, nil
	}
	mu.SetResourceVersion(c.nextRV())
	id := objectID{gk: gvk.GroupKind(), key: key}
	if mu.GetDeletionTimestamp() != nil && len(mu.GetFinalizers()) == 0 {
		c.remove(gvk.GroupKind(), key)
		return merged, nil
	}
	c.put(gvk.GroupKind(), key, merged)
	c.owners.Wrote(id, old, merged, manager)
	return merged, nil
}

// specChanged reports whether anything but metadata and status differs.
func specChanged(a, b map[string]any) bool {
	strip := func(m map[string]any) map[string]any {
		out := make(map[string]any, len(m))
		for k, v := range m {
			if k != "metadata" && k != "status" {
				out[k] = v
			}
		}
		return out
	}
	return !reflect.DeepEqual(strip(a), strip(b))
}

func newItems(old, cur []string) []string {
	seen := map[string]bool{}
	for _, s := range old {
		seen[s] = true
	}
	var out []string
	for _, s := range cur {
		if !seen[s] {
			out = append(out, s)
		}
	}
	return out
}

// Delete deletes obj, or only marks it with a deletionTimestamp while it
// has finalizers.
func (c *Client) Delete(_ context.Context, obj client.Object, opts ...client.DeleteOption) error {
	gvk, err := c.resolve("delete", obj, nsOf(obj), nameOf(obj))
	if err != nil {
		return err
	}
	o := (&client.DeleteOptions{}).ApplyOptions(opts)
	c.mu.Lock()
	defer c.mu.Unlock()
	return opError("delete", gvk, obj.GetNamespace(), obj.GetName(), c.delete(gvk, c.keyFor(gvk, obj.GetNamespace(), obj.GetName()), o))
}

// delete is Delete under mu.
func (c *Client) delete(gvk schema.GroupVersionKind, key client.ObjectKey, o *client.DeleteOptions) error {
	gr := c.kinds.GroupResource(gvk)
	m := c.stored(gvk.GroupKind(), key)
	if m == nil {
		return notFound(gr, key.Name)
	}
	u := objmap.Meta(m)
	if p := o.Preconditions; p != nil {
		if p.UID != nil && *p.UID != u.GetUID() {
			return apierrors.NewConflict(gr, key.Name, fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *p.UID, u.GetUID()))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != u.GetResourceVersion() {
			return apierrors.NewConflict(gr, key.Name, fmt.Errorf("precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s", *p.ResourceVersion, u.GetResourceVersion()))
		}
	}
	if len(o.DryRun) > 0 {
		return nil
	}
	if len(u.GetFinalizers()) == 0 {
		c.remove(gvk.GroupKind(), key)
		return nil
	}
	if u.GetDeletionTimestamp() == nil {
		next := objmap.DeepCopy(m)
		nu := objmap.Meta(next)
		now := metav1.NewTime(time.Now().Truncate(time.Second))
		var zero int64
		nu.SetDeletionTimestamp(&now)
		nu.SetDeletionGracePeriodSeconds(&zero)
		nu.SetResourceVersion(c.nextRV())
		c.put(gvk.GroupKind(), key, next)
	}
	return nil
}

// DeleteAllOf deletes every object of obj's kind that opts select.
func (c *Client) DeleteAllOf(_ context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	o := (&client.DeleteAllOfOptions{}).ApplyOptions(opts)
	gvk, err := c.listKind("delete all of", obj, &o.ListOptions)
	if err != nil {
		return err
	}
	if err := o.CheckScope(); err != nil {
		return opError("delete all of", gvk, o.Namespace, "", err)
	}
	if o.Namespace == "" && c.kinds.Namespaced(gvk, "") {
		// The API server serves no cluster-wide delete collection of a
		// namespaced kind.
		return opError("delete all of", gvk, "", "", apierrors.NewMethodNotSupported(c.kinds.GroupResource(gvk), "deletecollection"))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	keys, err := c.match(gvk, &o.ListOptions)
	if err != nil {
		return opError("delete all of", gvk, o.Namespace, "", err)
	}
	for _, k := range keys {
		if err := c.delete(gvk, k, &o.DeleteOptions); err != nil {
			return opError("delete all of", gvk, k.Namespace, k.Name, err)
		}
	}
	return nil
}
