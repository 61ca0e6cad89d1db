package client

import (
	"context"
	"encoding/json"
	"fmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/internal/kinds"
)

// request starts a request for t in ns (ignored for cluster-scoped kinds)
// on name (none for collections).
func (t *target) request(r *rest.Request, ns, name string) *rest.Request {
	r = r.NamespaceIfScoped(ns, t.namespaced).Resource(t.resource)
	if name != "" {
		r = r.Name(name)
	}
	return r
}

// check validates the namespace and name of one object, in a key or in
// the metadata of an object that verb writes. A namespace given for a
// cluster-scoped kind is ignored: requests never carry it in their path,
// and the API server clears it from a written object (so the object the
// caller passed comes back without it).
func (t *target) check(verb, ns, name string) error {
	return kinds.CheckKey(verb, t.gvk, t.namespaced, ns, name)
}

// withParams adds opts (a *metav1.XxxOptions) as query parameters, with
// client-go's own parameter codec; a request it cannot encode fails in Do.
func withParams(r *rest.Request, opts runtime.Object) *rest.Request {
	return r.VersionedParams(opts, metav1.ParameterCodec)
}

// deleteBody sets opts as the JSON body of a delete request.
func deleteBody(r *rest.Request, opts *metav1.DeleteOptions) (*rest.Request, error) {
	data, err := json.Marshal(opts)
	if err != nil {
		return nil, fmt.Errorf("encode delete options: %w", err)
	}
	return r.SetHeader("Content-Type", "application/json").Body(data), nil
}

// into decodes a successful result into obj, which is cleared first so no
// stale field survives; on failure obj is left untouched.
func into(res rest.Result, obj runtime.Object) error {
	if err := res.Error(); err != nil {
		return err
	}
	reset(obj)
	return res.Into(obj)
}

// reset clears obj in place.
func reset(obj runtime.Object) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		o.Object = nil
	case *unstructured.UnstructuredList:
		o.Object, o.Items = nil, nil
	default:
		v := reflect.ValueOf(obj)
		if v.Kind() == reflect.Pointer && !v.IsNil() {
			v.Elem().Set(reflect.Zero(v.Elem().Type()))
		}
	}
}

func (c *liveClient) Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error {
	if isNil(obj) {
		return nilError("get", obj)
	}
	t, err := c.targetFor("get", obj, key.Namespace, key.Name)
	if err != nil {
		return err
	}
	if err := t.check("get", key.Namespace, key.Name); err != nil {
		return err
	}
	o := (&GetOptions{}).ApplyOptions(opts)
	raw := o.Raw
	if raw == nil {
		raw = &metav1.GetOptions{}
	}
	if t.metadata {
		return opError("get", t.gvk, key.Namespace, key.Name, c.metadataGet(ctx, t, key, obj, raw))
	}
	res := withParams(t.request(t.rc.Get(), key.Namespace, key.Name), raw).Do(ctx)
	return opError("get", t.gvk, key.Namespace, key.Name, into(res, obj))
}

func (c *liveClient) List(ctx context.Context, list ObjectList, opts ...ListOption) error {
	if isNil(list) {
		return nilError("list", list)
	}
	o := (&ListOptions{}).ApplyOptions(opts)
	t, err := c.targetFor("list", list, o.Namespace, "")
	if err != nil {
		return err
	}
	if err := InvalidSelectorError(o.LabelSelector); err != nil {
		return opError("list", t.gvk, o.Namespace, "", fmt.Errorf("invalid label selector: %w", err))
	}
	if t.metadata {
		return opError("list", t.gvk, o.Namespace, "", c.metadataList(ctx, t, list, o))
	}
	res := withParams(t.request(t.rc.Get(), o.Namespace, ""), o.AsListOptions()).Do(ctx)
	return opError("list", t.gvk, o.Namespace, "", into(res, list))
}

func (c *liveClient) Create(ctx context.Context, obj Object, opts ...CreateOption) error {
	if isNil(obj) {
		return nilError("create", obj)
	}
	t, err := c.targetFor("create", obj, obj.GetNamespace(), obj.GetName())
	if err != nil {
		return err
	}
	name := obj.GetName()
	if name == "" {
		name = obj.GetGenerateName()
	}
	checked := name
	if checked == "" {
		// Without name and generateName the API server decides, as
		// controller-runtime's client lets it: the review kinds
		// (SelfSubjectAccessReview, SubjectAccessReview, TokenReview, ...)
		// take none, every other kind gets the server's 422. Only the
		// namespace is checked here.
		checked = "(unnamed)"
	}
	if err := t.check("create", obj.GetNamespace(), checked); err != nil {
		return err
	}
	if t.metadata {
		return opError("create", t.gvk, obj.GetNamespace(), obj.GetName(), fmt.Errorf("metadata-only objects: %w; use a typed or unstructured object", ErrNotSupported))
	}
	o := (&CreateOptions{}).ApplyOptions(opts)
	o.FieldManager = orString(o.FieldManager, c.fieldOwner)
	ctx, done, err := fenceWrite(ctx)
	if err != nil {
		return opError("create", t.gvk, obj.GetNamespace(), name, err)
	}
	res := withParams(t.request(t.rc.Post(), obj.GetNamespace(), ""), o.AsCreateOptions()).Body(obj).Do(ctx)
	err = done(into(res, obj))
	if name == "" && apierrors.IsInvalid(err) {
		err = fmt.Errorf("%w: %w", ErrNameRequired, err) // the server's 422, and the fake's sentinel
	}
	return opError("create", t.gvk, obj.GetNamespace(), name, err)
}

func (c *liveClient) Update(ctx context.Context, obj Object, opts ...UpdateOption) error {
	if isNil(obj) {
		return nilError("update", obj)
	}
	t, err := c.targetFor("update", obj, obj.GetNamespace(), obj.GetName())
	if err != nil {
		return err
	}
	if err := t.check("update", obj.GetNamespace(), obj.GetName()); err != nil {
		return err
	}
	if t.metadata {
		return opError("update", t.gvk, obj.GetNamespace(), obj.GetName(), fmt.Errorf("metadata-only objects: %w; use Patch", ErrNotSupported))
	}
	o := (&UpdateOptions{}).ApplyOptions(opts)
	o.FieldManager = orString(o.FieldManager, c.fieldOwner)
	ctx, done, err := fenceWrite(ctx)
	if err != nil {
		return opError("update", t.gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	res := withParams(t.request(t.rc.Put(), obj.GetNamespace(), obj.GetName()), o.AsUpdateOptions()).Body(obj).Do(ctx)
	return opError("update", t.gvk, obj.GetNamespace(), obj.GetName(), done(into(res, obj)))
}

func (c *liveClient) Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error {
	if isNil(obj) {
		return nilError("patch", obj)
	}
	t, err := c.targetFor("patch", obj, obj.GetNamespace(), obj.GetName())
	if err != nil {
		return err
	}
	if err := t.check("patch", obj.GetNamespace(), obj.GetName()); err != nil {
		return err
	}
	if patch == nil {
		return opError("patch", t.gvk, obj.GetNamespace(), obj.GetName(), fmt.Errorf("patch is nil"))
	}
	data, err := patch.Data(obj)
	if err != nil {
		return opError("patch", t.gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	o := (&PatchOptions{}).ApplyOptions(opts)
	o.FieldManager = orString(o.FieldManager, c.fieldOwner)
	if err := checkPatchOptions(patch.Type(), o); err != nil {
		return opError("patch", t.gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	ctx, done, err := fenceWrite(ctx)
	if err != nil {
		return opError("patch", t.gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	if t.metadata {
		return opError("patch", t.gvk, obj.GetNamespace(), obj.GetName(), done(c.metadataPatch(ctx, t, obj, patch.Type(), data, o)))
	}
	res := withParams(t.request(t.rc.Patch(patch.Type()), obj.GetNamespace(), obj.GetName()), o.AsPatchOptions()).Body(data).Do(ctx)
	return opError("patch", t.gvk, obj.GetNamespace(), obj.GetName(), done(into(res, obj)))
}

// checkPatchOptions rejects option combinations the server would reject
// with a vaguer message.
func checkPatchOptions(pt types.PatchType, o *PatchOptions) error {
	if pt == types.ApplyPatchType && o.FieldManager == "" {
		return fmt.Errorf("an apply patch needs a field owner (client.FieldOwner or Options.FieldOwner)")
	}
	if pt != types.ApplyPatchType && o.Force != nil {
		return fmt.Errorf("ForceOwnership is only valid for apply patches, not %s", pt)
	}
	return nil
}

func (c *liveClient) Delete(ctx context.Context, obj Object, opts ...DeleteOption) error {
	_, err := c.delete(ctx, obj, opts...)
	return err
}

// deleteAnswer is what the API server's answer to a Delete says of the
// object; known is false when the answer could not be read.
type deleteAnswer struct {
	known bool
	gone  bool   // removed; else terminating (finalizers, a grace period)
	rv    uint64 // of the terminating object
	uid   types.UID
}

// delete deletes obj and reads the server's answer: a Status when the
// object is gone, or the object itself, which is terminating when it
// carries a deletionTimestamp (some kinds answer with the deleted object).
func (c *liveClient) delete(ctx context.Context, obj Object, opts ...DeleteOption) (deleteAnswer, error) {
	if isNil(obj) {
		return deleteAnswer{}, nilError("delete", obj)
	}
	t, err := c.targetFor("delete", obj, obj.GetNamespace(), obj.GetName())
	if err != nil {
		return deleteAnswer{}, err
	}
	if err := t.check("delete", obj.GetNamespace(), obj.GetName()); err != nil {
		return deleteAnswer{}, err
	}
	o := (&DeleteOptions{}).ApplyOptions(opts)
	ctx, done, err := fenceWrite(ctx)
	if err != nil {
		return deleteAnswer{}, opError("delete", t.gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	if t.metadata {
		return deleteAnswer{}, opError("delete", t.gvk, obj.GetNamespace(), obj.GetName(),
			done(c.metadataResource(t, obj.GetNamespace()).Delete(ctx, obj.GetName(), *o.AsDeleteOptions())))
	}
	r, err := deleteBody(t.request(t.rc.Delete(), obj.GetNamespace(), obj.GetName()), o.AsDeleteOptions())
	if err != nil {
		return deleteAnswer{}, opError("delete", t.gvk, obj.GetNamespace(), obj.GetName(), done(err))
	}
	res := r.Do(ctx)
	if err := done(res.Error()); err != nil {
		return deleteAnswer{}, opError("delete", t.gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	answer, err := res.Get()
	if err != nil {
		return deleteAnswer{}, nil // deleted; the answer is unreadable
	}
	return readDeleteAnswer(answer), nil
}

func readDeleteAnswer(answer runtime.Object) deleteAnswer {
	switch a := answer.(type) {
	case *metav1.Status:
		d := deleteAnswer{known: true, gone: true}
		if a.Details != nil {
			d.uid = a.Details.UID
		}
		return d
	case *unstructured.Unstructured:
		if a.GetKind() == "Status" {
			uid, _, _ := unstructured.NestedString(a.Object, "details", "uid")
			return deleteAnswer{known: true, gone: true, uid: types.UID(uid)}
		}
	}
	m, err := meta.Accessor(answer)
	if err != nil {
		return deleteAnswer{}
	}
	d := deleteAnswer{known: true, uid: m.GetUID()}
	if m.GetDeletionTimestamp() == nil {
		d.gone = true
	} else {
		d.rv = parseRV(m.GetResourceVersion())
	}
	return d
}

func (c *liveClient) DeleteAllOf(ctx context.Context, obj Object, opts ...DeleteAllOfOption) error {
	if isNil(obj) {
		return nilError("delete all of", obj)
	}
	o := (&DeleteAllOfOptions{}).ApplyOptions(opts)
	t, err := c.targetFor("delete all of", obj, o.Namespace, "")
	if err != nil {
		return err
	}
	if !t.namespaced {
		// Ignored, as in every request of a cluster-scoped kind; so it
		// does not count as narrowing the delete (CheckScope).
		o.Namespace = ""
	}
	if err := InvalidSelectorError(o.LabelSelector); err != nil {
		return opError("delete all of", t.gvk, o.Namespace, "", fmt.Errorf("invalid label selector: %w", err))
	}
	if err := o.CheckScope(); err != nil {
		return opError("delete all of", t.gvk, o.Namespace, "", err)
	}
	ctx, done, err := fenceWrite(ctx)
	if err != nil {
		return opError("delete all of", t.gvk, o.Namespace, "", err)
	}
	if t.metadata {
		return opError("delete all of", t.gvk, o.Namespace, "",
			done(c.metadataResource(t, o.Namespace).DeleteCollection(ctx, *o.AsDeleteOptions(), *o.AsListOptions())))
	}
	r := withParams(t.request(t.rc.Delete(), o.Namespace, ""), o.AsListOptions())
	if r, err = deleteBody(r, o.AsDeleteOptions()); err == nil {
		err = r.Do(ctx).Error()
	}
	return opError("delete all of", t.gvk, o.Namespace, "", done(err))
}

func (c *liveClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...ApplyOption) error {
	at, err := ApplyTargetOf(obj)
	if err != nil {
		return err
	}
	o := (&ApplyOptions{}).ApplyOptions(opts)
	o.FieldManager = orString(o.FieldManager, c.fieldOwner)
	if o.FieldManager == "" {
		return opError("apply", at.GVK, at.Namespace, at.Name, fmt.Errorf("a field owner is required (client.FieldOwner or Options.FieldOwner)"))
	}
	t, err := c.targetForGVK(at.GVK, true, false)
	if err != nil {
		return opError("apply", at.GVK, at.Namespace, at.Name, err)
	}
	if err := t.check("apply", at.Namespace, at.Name); err != nil {
		return err
	}
	ctx, done, err := fenceWrite(ctx)
	if err != nil {
		return opError("apply", at.GVK, at.Namespace, at.Name, err)
	}
	res := withParams(t.request(t.rc.Patch(types.ApplyPatchType), at.Namespace, at.Name), o.AsPatchOptions()).
		Body(at.Data).Do(ctx)
	// Error, unlike Raw, decodes the server's Status (the conflict details).
	if err := done(res.Error()); err != nil {
		return opError("apply", at.GVK, at.Namespace, at.Name, err)
	}
	raw, err := res.Raw()
	if err != nil {
		return opError("apply", at.GVK, at.Namespace, at.Name, err)
	}
	if err := json.Unmarshal(raw, obj); err != nil {
		return opError("apply", at.GVK, at.Namespace, at.Name, fmt.Errorf("decode answer: %w", err))
	}
	return nil
}
