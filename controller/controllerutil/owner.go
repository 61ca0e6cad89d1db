package controllerutil

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
)

// AlreadyOwnedError is returned by SetControllerReference when the object
// already has a different controller.
type AlreadyOwnedError struct {
	Object metav1.Object
	Owner  metav1.OwnerReference
}

func (e *AlreadyOwnedError) Error() string {
	return fmt.Sprintf("controllerutil: object %s is already owned by another %s controller %s",
		key(e.Object), e.Owner.Kind, e.Owner.Name)
}

func key(o metav1.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// OwnerReferenceOption changes the owner reference SetOwnerReference and
// SetControllerReference write.
type OwnerReferenceOption func(*metav1.OwnerReference)

// WithBlockOwnerDeletion sets blockOwnerDeletion, which foreground deletion
// of the owner honours. SetControllerReference sets it to true by default.
func WithBlockOwnerDeletion(block bool) OwnerReferenceOption {
	return func(r *metav1.OwnerReference) { r.BlockOwnerDeletion = &block }
}

// SetControllerReference makes owner the controller of controlled: an
// owner reference with controller and blockOwnerDeletion true. It fails
// with *AlreadyOwnedError when another object is the controller.
func SetControllerReference(owner, controlled metav1.Object, scheme *runtime.Scheme, opts ...OwnerReferenceOption) error {
	ref, err := ownerRef(owner, controlled, scheme)
	if err != nil {
		return err
	}
	t := true
	ref.Controller, ref.BlockOwnerDeletion = &t, &t
	for _, opt := range opts {
		opt(&ref)
	}
	if existing := metav1.GetControllerOfNoCopy(controlled); existing != nil && !sameOwner(*existing, ref) {
		return &AlreadyOwnedError{Object: controlled, Owner: *existing}
	}
	upsert(controlled, ref)
	return nil
}

// SetOwnerReference adds owner to object's owner references, or updates
// the reference it already has, without making it the controller.
func SetOwnerReference(owner, object metav1.Object, scheme *runtime.Scheme, opts ...OwnerReferenceOption) error {
	ref, err := ownerRef(owner, object, scheme)
	if err != nil {
		return err
	}
	for _, opt := range opts {
		opt(&ref)
	}
	upsert(object, ref)
	return nil
}

// RemoveOwnerReference removes owner from object's owner references. It is
// an error when owner is not among them.
func RemoveOwnerReference(owner, object metav1.Object, scheme *runtime.Scheme) error {
	ref, err := ownerRef(owner, object, scheme)
	if err != nil {
		return err
	}
	refs := object.GetOwnerReferences()
	out := refs[:0:0]
	for _, r := range refs {
		if !sameOwner(r, ref) {
			out = append(out, r)
		}
	}
	if len(out) == len(refs) {
		return fmt.Errorf("controllerutil: %s %s is not an owner of %s", ref.Kind, ref.Name, key(object))
	}
	object.SetOwnerReferences(out)
	return nil
}

// RemoveControllerReference removes owner's reference from object when
// owner is object's controller. It is an error when owner is not.
func RemoveControllerReference(owner, object metav1.Object, scheme *runtime.Scheme) error {
	ref, err := ownerRef(owner, object, scheme)
	if err != nil {
		return err
	}
	ctrl := metav1.GetControllerOfNoCopy(object)
	if ctrl == nil || !sameOwner(*ctrl, ref) {
		return fmt.Errorf("controllerutil: %s %s is not the controller of %s", ref.Kind, ref.Name, key(object))
	}
	return RemoveOwnerReference(owner, object, scheme)
}

// HasControllerReference reports whether object has a controller.
func HasControllerReference(object metav1.Object) bool {
	return metav1.GetControllerOfNoCopy(object) != nil
}

// HasOwnerReference reports whether refs include obj.
func HasOwnerReference(refs []metav1.OwnerReference, obj client.Object, scheme *runtime.Scheme) (bool, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return false, fmt.Errorf("controllerutil: owner %s: %w", key(obj), err)
	}
	want := metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: obj.GetName()}
	for _, r := range refs {
		if sameOwner(r, want) {
			return true, nil
		}
	}
	return false, nil
}

// ownerRef builds the reference to owner after checking that owner may own
// object (the namespaces; the UID is copied, even when empty).
func ownerRef(owner, object metav1.Object, scheme *runtime.Scheme) (metav1.OwnerReference, error) {
	ro, ok := owner.(runtime.Object)
	if !ok {
		return metav1.OwnerReference{}, fmt.Errorf("controllerutil: owner %s is a %T, not a runtime.Object", key(owner), owner)
	}
	if ns := owner.GetNamespace(); ns != "" {
		switch object.GetNamespace() {
		case "":
			return metav1.OwnerReference{}, fmt.Errorf("controllerutil: cluster-scoped %s must not have a namespace-scoped owner %s", key(object), key(owner))
		case ns:
		default:
			return metav1.OwnerReference{}, fmt.Errorf("controllerutil: %s and owner %s are in different namespaces; cross-namespace owner references are disallowed", key(object), key(owner))
		}
	}
	gvk, err := apiutil.GVKForObject(ro, scheme)
	if err != nil {
		return metav1.OwnerReference{}, fmt.Errorf("controllerutil: owner %s: %w", key(owner), err)
	}
	// An owner without a UID (not read or created yet) gives a reference
	// with an empty UID, as in controller-runtime: the API server refuses
	// to store it, naming the field, and tests that only build objects
	// keep working.
	return metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID()}, nil
}

// sameOwner compares references by group, kind and name (the version may
// differ).
func sameOwner(a, b metav1.OwnerReference) bool {
	ga, errA := schema.ParseGroupVersion(a.APIVersion)
	gb, errB := schema.ParseGroupVersion(b.APIVersion)
	if errA != nil || errB != nil {
		return false
	}
	return ga.Group == gb.Group && a.Kind == b.Kind && a.Name == b.Name
}

func upsert(object metav1.Object, ref metav1.OwnerReference) {
	refs := object.GetOwnerReferences()
	for i := range refs {
		if sameOwner(refs[i], ref) {
			refs[i] = ref
			object.SetOwnerReferences(refs)
			return
		}
	}
	object.SetOwnerReferences(append(refs, ref))
}
