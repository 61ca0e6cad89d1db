package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client/internal/fence"
	"github.com/kubeloop/kubeloop/client/internal/ryow"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// errNeedsOwner is the error of an Apply without a field manager.
var errNeedsOwner = fmt.Errorf("a field owner is required (client.FieldOwner or Options.FieldOwner)")

// Create saves obj; on success obj holds what the server stored.
func (c *Client) Create(ctx context.Context, obj Object, co *metav1.CreateOptions) error {
	if kinds.IsNil(obj) {
		return NilError("create", obj)
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
	ctx, done, err := fence.Write(ctx)
	if err != nil {
		return opError("create", t.gvk, obj.GetNamespace(), name, err)
	}
	res := withParams(t.request(t.rc.Post(), obj.GetNamespace(), ""), co).Body(obj).Do(ctx)
	err = done(into(res, obj))
	if name == "" && apierrors.IsInvalid(err) {
		err = fmt.Errorf("%w: %w", kinds.ErrNameRequired, err) // the server's 422, and the fake's sentinel
	}
	return opError("create", t.gvk, obj.GetNamespace(), name, err)
}

// Update replaces obj.
func (c *Client) Update(ctx context.Context, obj Object, uo *metav1.UpdateOptions) error {
	t, err := c.checkedTarget("update", obj)
	if err != nil {
		return err
	}
	if t.metadata {
		return opError("update", t.gvk, obj.GetNamespace(), obj.GetName(), fmt.Errorf("metadata-only objects: %w; use Patch", ErrNotSupported))
	}
	ctx, done, err := fence.Write(ctx)
	if err != nil {
		return opError("update", t.gvk, obj.GetNamespace(), obj.GetName(), err)
	}
	res := withParams(t.request(t.rc.Put(), obj.GetNamespace(), obj.GetName()), uo).Body(obj).Do(ctx)
	return opError("update", t.gvk, obj.GetNamespace(), obj.GetName(), done(into(res, obj)))
}

// Patch applies patch to obj.
func (c *Client) Patch(ctx context.Context, obj Object, patch Patch, po *metav1.PatchOptions) error {
	t, err := c.checkedTarget("patch", obj)
	if err != nil {
		return err
	}
	fail := func(err error) error { return opError("patch", t.gvk, obj.GetNamespace(), obj.GetName(), err) }
	if patch == nil {
		return fail(fmt.Errorf("patch is nil"))
	}
	data, err := patch.Data(obj)
	if err != nil {
		return fail(err)
	}
	if err := checkPatchOptions(patch.Type(), po); err != nil {
		return fail(err)
	}
	ctx, done, err := fence.Write(ctx)
	if err != nil {
		return fail(err)
	}
	if t.metadata {
		return fail(done(c.metadataPatch(ctx, t, obj, patch.Type(), data, po)))
	}
	res := withParams(t.request(t.rc.Patch(patch.Type()), obj.GetNamespace(), obj.GetName()), po).Body(data).Do(ctx)
	return fail(done(into(res, obj)))
}

// checkPatchOptions rejects option combinations the server would reject
// with a vaguer message.
func checkPatchOptions(pt types.PatchType, po *metav1.PatchOptions) error {
	if pt == types.ApplyPatchType && po.FieldManager == "" {
		return fmt.Errorf("an apply patch needs a field owner (client.FieldOwner or Options.FieldOwner)")
	}
	if pt != types.ApplyPatchType && po.Force != nil {
		return fmt.Errorf("ForceOwnership is only valid for apply patches, not %s", pt)
	}
	return nil
}

// DeleteAnswer is what the API server's answer to a Delete says of the
// object; Known is false when the answer could not be read.
type DeleteAnswer struct {
	Known bool
	Gone  bool   // removed; else terminating (finalizers, a grace period)
	RV    uint64 // of the terminating object
	UID   types.UID
}

// Delete deletes obj and reads the server's answer: a Status when the
// object is gone, or the object itself, which is terminating when it
// carries a deletionTimestamp (some kinds answer with the deleted object).
func (c *Client) Delete(ctx context.Context, obj Object, do *metav1.DeleteOptions) (DeleteAnswer, error) {
	t, err := c.checkedTarget("delete", obj)
	if err != nil {
		return DeleteAnswer{}, err
	}
	fail := func(err error) error { return opError("delete", t.gvk, obj.GetNamespace(), obj.GetName(), err) }
	ctx, done, err := fence.Write(ctx)
	if err != nil {
		return DeleteAnswer{}, fail(err)
	}
	if t.metadata {
		return DeleteAnswer{}, fail(done(c.metadataResource(t, obj.GetNamespace()).Delete(ctx, obj.GetName(), *do)))
	}
	r, err := deleteBody(t.request(t.rc.Delete(), obj.GetNamespace(), obj.GetName()), do)
	if err != nil {
		return DeleteAnswer{}, fail(done(err))
	}
	res := r.Do(ctx)
	if err := done(res.Error()); err != nil {
		return DeleteAnswer{}, fail(err)
	}
	answer, err := res.Get()
	if err != nil {
		return DeleteAnswer{}, nil // deleted; the answer is unreadable
	}
	return readDeleteAnswer(answer), nil
}

func readDeleteAnswer(answer runtime.Object) DeleteAnswer {
	switch a := answer.(type) {
	case *metav1.Status:
		d := DeleteAnswer{Known: true, Gone: true}
		if a.Details != nil {
			d.UID = a.Details.UID
		}
		return d
	case *unstructured.Unstructured:
		if a.GetKind() == "Status" {
			uid, _, _ := unstructured.NestedString(a.Object, "details", "uid")
			return DeleteAnswer{Known: true, Gone: true, UID: types.UID(uid)}
		}
	}
	m, err := meta.Accessor(answer)
	if err != nil {
		return DeleteAnswer{}
	}
	d := DeleteAnswer{Known: true, UID: m.GetUID()}
	if m.GetDeletionTimestamp() == nil {
		d.Gone = true
	} else {
		d.RV = ryow.ParseRV(m.GetResourceVersion())
	}
	return d
}

// CheckScope returns ErrDeleteEverything when a DeleteAllOf in ns with lo
// would delete every object of the kind and everything is not set.
func CheckScope(everything bool, ns string, lo *metav1.ListOptions) error {
	if everything || ns != "" || lo.LabelSelector != "" || lo.FieldSelector != "" {
		return nil
	}
	return ErrDeleteEverything
}

// DeleteAllOf deletes the objects of obj's kind in ns that lo selects (sel
// is its label selector, checked with SelectorError); without a namespace
// and a selector only when everything is set.
func (c *Client) DeleteAllOf(ctx context.Context, obj Object, ns string, sel labels.Selector, everything bool, lo *metav1.ListOptions, do *metav1.DeleteOptions) error {
	if kinds.IsNil(obj) {
		return NilError("delete all of", obj)
	}
	t, err := c.targetFor("delete all of", obj, ns, "")
	if err != nil {
		return err
	}
	if !t.namespaced {
		// Ignored, as in every request of a cluster-scoped kind; so it
		// does not count as narrowing the delete (CheckScope).
		ns = ""
	}
	if err := SelectorError(sel); err != nil {
		return opError("delete all of", t.gvk, ns, "", fmt.Errorf("invalid label selector: %w", err))
	}
	if err := CheckScope(everything, ns, lo); err != nil {
		return opError("delete all of", t.gvk, ns, "", err)
	}
	ctx, done, err := fence.Write(ctx)
	if err != nil {
		return opError("delete all of", t.gvk, ns, "", err)
	}
	if t.metadata {
		return opError("delete all of", t.gvk, ns, "", done(c.metadataResource(t, ns).DeleteCollection(ctx, *do, *lo)))
	}
	r := withParams(t.request(t.rc.Delete(), ns, ""), lo)
	if r, err = deleteBody(r, do); err == nil {
		err = r.Do(ctx).Error()
	}
	return opError("delete all of", t.gvk, ns, "", done(err))
}

// Apply sends a server-side apply request for obj and decodes the answer
// into it. po.FieldManager is required.
func (c *Client) Apply(ctx context.Context, obj runtime.ApplyConfiguration, po *metav1.PatchOptions) error {
	return c.apply(ctx, obj, nil, nil, po)
}

// apply sends a server-side apply request for obj, to subresource *sub of
// the object it names (nil sub: the object itself), with body as the
// request (nil means obj), and decodes the answer into the body.
func (c *Client) apply(ctx context.Context, obj runtime.ApplyConfiguration, sub *string, body runtime.ApplyConfiguration, po *metav1.PatchOptions) error {
	verb := "apply"
	if sub != nil {
		verb = "apply " + *sub + " of"
	}
	at, err := ApplyTargetOf(obj)
	if err != nil {
		if sub != nil {
			return fmt.Errorf("%s: %w", *sub, err)
		}
		return err
	}
	fail := func(err error) error { return opError(verb, at.GVK, at.Namespace, at.Name, err) }
	if sub != nil && *sub == "" {
		return fail(errors.New("subresource name is empty"))
	}
	if po.FieldManager == "" {
		return fail(errNeedsOwner)
	}
	t, err := c.targetForGVK(at.GVK, true, false)
	if err != nil {
		return fail(err)
	}
	if err := t.check(verb, at.Namespace, at.Name); err != nil {
		return err
	}
	data := at.Data
	if kinds.IsNil(body) {
		body = obj
	} else if data, err = json.Marshal(body); err != nil {
		return fail(fmt.Errorf("encode subresource body %T: %w", body, err))
	}
	ctx, done, err := fence.Write(ctx)
	if err != nil {
		return fail(err)
	}
	r := t.request(t.rc.Patch(types.ApplyPatchType), at.Namespace, at.Name)
	if sub != nil {
		r = r.SubResource(*sub)
	}
	res := withParams(r, po).Body(data).Do(ctx)
	// Error, unlike Raw, decodes the server's Status (the conflict details).
	if err := done(res.Error()); err != nil {
		return fail(err)
	}
	raw, err := res.Raw()
	if err != nil {
		return fail(err)
	}
	if err := json.Unmarshal(raw, body); err != nil {
		return fail(fmt.Errorf("decode answer: %w", err))
	}
	return nil
}
