package scheme

import (
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrInvalid is returned (wrapped) by AddToScheme and Build when the
// Builder or one of its objects cannot be registered.
var ErrInvalid = errors.New("scheme: invalid registration")

// Builder collects the Go types of one group version and adds them to a
// runtime.Scheme. The zero value with GroupVersion set is ready to use;
// use it through a pointer, as &Builder{GroupVersion: gv}.
type Builder struct {
	// GroupVersion is the group and version the objects are registered
	// under. Version is required; Group is empty for the core group.
	GroupVersion schema.GroupVersion

	objects []runtime.Object
}

// Register adds objects to the types the Builder registers, for example
// Register(&Guestbook{}, &GuestbookList{}). Each object is a pointer to a
// struct whose type name is its kind. It returns b, so calls chain.
func (b *Builder) Register(objects ...runtime.Object) *Builder {
	b.objects = append(b.objects, objects...)
	return b
}

// AddToScheme registers the Builder's objects and the group version's
// meta types in s. It checks every object first and changes s only when
// all of them can be registered.
func (b *Builder) AddToScheme(s *runtime.Scheme) error {
	if s == nil {
		return fmt.Errorf("%w: %s: nil scheme", ErrInvalid, b.GroupVersion)
	}
	if err := b.check(s); err != nil {
		return err
	}
	s.AddKnownTypes(b.GroupVersion, b.objects...)
	metav1.AddToGroupVersion(s, b.GroupVersion)
	return nil
}

// Build returns a new scheme holding only the Builder's objects and the
// group version's meta types.
func (b *Builder) Build() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := b.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// check returns every reason the objects cannot be added to s, joined.
// runtime.Scheme.AddKnownTypes panics on each of them.
func (b *Builder) check(s *runtime.Scheme) error {
	gv := b.GroupVersion
	if gv.Version == "" {
		return fmt.Errorf("%w: group %q: GroupVersion.Version is empty", ErrInvalid, gv.Group)
	}
	known := s.KnownTypes(gv)
	seen := make(map[string]reflect.Type, len(b.objects))
	var errs []error
	for i, obj := range b.objects {
		t := reflect.TypeOf(obj)
		if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
			errs = append(errs, fmt.Errorf("%w: %s: object %d is %T, not a pointer to a struct", ErrInvalid, gv, i, obj))
			continue
		}
		kind, elem := t.Elem().Name(), t.Elem()
		for _, other := range []reflect.Type{known[kind], seen[kind]} {
			if other != nil && other != elem {
				errs = append(errs, fmt.Errorf("%w: %s, Kind=%s: %v is already registered as %v", ErrInvalid, gv, kind, elem, other))
			}
		}
		seen[kind] = elem
	}
	return errors.Join(errs...)
}
