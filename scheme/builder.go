package scheme

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

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
	// SchemeBuilder holds registration functions run by AddToScheme after
	// the objects are added, in order, as controller-runtime's embedded
	// field does: code generators append to it, conversion-gen's
	// `localSchemeBuilder = &SchemeBuilder.SchemeBuilder` then
	// `localSchemeBuilder.Register(RegisterConversions)`, defaulter-gen's
	// RegisterDefaults alike. Nil means none. (Its own Register and
	// AddToScheme are shadowed by the Builder's; call them as
	// b.SchemeBuilder.Register(fn).)
	runtime.SchemeBuilder

	objects []runtime.Object
}

// Register adds objects to the types the Builder registers, for example
// Register(&Guestbook{}, &GuestbookList{}). Each object is a pointer to a
// struct whose type name is its kind. It returns b, so calls chain.
func (b *Builder) Register(objects ...runtime.Object) *Builder {
	b.objects = append(b.objects, objects...)
	return b
}

// RegisterAll adds what other registers now (its objects, under its own
// GroupVersion, and its SchemeBuilder functions) to b.SchemeBuilder, as
// controller-runtime's does: later registrations with other are not
// included. It returns b, so calls chain; a nil other adds nothing.
func (b *Builder) RegisterAll(other *Builder) *Builder {
	if other == nil {
		return b
	}
	if len(other.objects) > 0 {
		gv, objects := other.GroupVersion, slices.Clone(other.objects)
		b.SchemeBuilder = append(b.SchemeBuilder, func(s *runtime.Scheme) error { return addObjects(s, gv, objects) })
	}
	b.SchemeBuilder = append(b.SchemeBuilder, other.SchemeBuilder...)
	return b
}

// AddToScheme registers the Builder's objects and the group version's
// meta types in s, then runs the SchemeBuilder functions in order. It
// checks every object first and changes s only when all of them can be
// registered; a function's error is returned (wrapped) and stops the
// functions after it, leaving what the earlier ones did.
func (b *Builder) AddToScheme(s *runtime.Scheme) error {
	if s == nil {
		return fmt.Errorf("%w: %s: nil scheme", ErrInvalid, b.GroupVersion)
	}
	if len(b.objects) > 0 || len(b.SchemeBuilder) == 0 {
		if err := addObjects(s, b.GroupVersion, b.objects); err != nil {
			return err
		}
	}
	for i, fn := range b.SchemeBuilder {
		if fn == nil {
			return fmt.Errorf("%w: %s: SchemeBuilder function %d is nil", ErrInvalid, b.GroupVersion, i)
		}
		if err := fn(s); err != nil {
			if errors.Is(err, ErrInvalid) { // copied objects (RegisterAll), already named
				return err
			}
			return fmt.Errorf("scheme: %s: SchemeBuilder function %d: %w", b.GroupVersion, i, err)
		}
	}
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

// addObjects registers objects and gv's meta types in s, or changes
// nothing and returns every reason it cannot.
func addObjects(s *runtime.Scheme, gv schema.GroupVersion, objects []runtime.Object) error {
	if err := check(s, gv, objects); err != nil {
		return err
	}
	s.AddKnownTypes(gv, objects...)
	metav1.AddToGroupVersion(s, gv)
	return nil
}

// check returns every reason objects cannot be added to s under gv,
// joined. runtime.Scheme.AddKnownTypes panics on each of them.
func check(s *runtime.Scheme, gv schema.GroupVersion, objects []runtime.Object) error {
	if gv.Version == "" {
		return fmt.Errorf("%w: group %q: GroupVersion.Version is empty", ErrInvalid, gv.Group)
	}
	known := s.KnownTypes(gv)
	seen := make(map[string]reflect.Type, len(objects))
	var errs []error
	for i, obj := range objects {
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
