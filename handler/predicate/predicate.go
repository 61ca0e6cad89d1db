package predicate

import (
	"errors"
	"fmt"
	"maps"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/handler"
)

// TypedPredicate decides whether an event about an object of type object
// is handled.
type TypedPredicate[object any] interface {
	// Create reports whether a CreateEvent is handled.
	Create(handler.TypedCreateEvent[object]) bool
	// Update reports whether an UpdateEvent is handled.
	Update(handler.TypedUpdateEvent[object]) bool
	// Delete reports whether a DeleteEvent is handled.
	Delete(handler.TypedDeleteEvent[object]) bool
	// Generic reports whether a GenericEvent is handled.
	Generic(handler.TypedGenericEvent[object]) bool
}

// Predicate decides whether an event is handled: the TypedPredicate of
// client.Object.
type Predicate = TypedPredicate[client.Object]

// TypedFuncs is a TypedPredicate made of functions; a nil function returns
// true.
type TypedFuncs[object any] struct {
	// CreateFunc filters CreateEvents.
	CreateFunc func(handler.TypedCreateEvent[object]) bool
	// UpdateFunc filters UpdateEvents.
	UpdateFunc func(handler.TypedUpdateEvent[object]) bool
	// DeleteFunc filters DeleteEvents.
	DeleteFunc func(handler.TypedDeleteEvent[object]) bool
	// GenericFunc filters GenericEvents.
	GenericFunc func(handler.TypedGenericEvent[object]) bool
}

// Funcs is the TypedFuncs of client.Object.
type Funcs = TypedFuncs[client.Object]

var _ Predicate = Funcs{}

// Create calls CreateFunc, or returns true if it is nil.
func (p TypedFuncs[T]) Create(e handler.TypedCreateEvent[T]) bool {
	return p.CreateFunc == nil || p.CreateFunc(e)
}

// Update calls UpdateFunc, or returns true if it is nil.
func (p TypedFuncs[T]) Update(e handler.TypedUpdateEvent[T]) bool {
	return p.UpdateFunc == nil || p.UpdateFunc(e)
}

// Delete calls DeleteFunc, or returns true if it is nil.
func (p TypedFuncs[T]) Delete(e handler.TypedDeleteEvent[T]) bool {
	return p.DeleteFunc == nil || p.DeleteFunc(e)
}

// Generic calls GenericFunc, or returns true if it is nil.
func (p TypedFuncs[T]) Generic(e handler.TypedGenericEvent[T]) bool {
	return p.GenericFunc == nil || p.GenericFunc(e)
}

// NewPredicateFuncs returns a Predicate that applies filter to the object of
// every event; for an update, to the new object.
func NewPredicateFuncs(filter func(client.Object) bool) Funcs {
	return NewTypedPredicateFuncs(filter)
}

// NewTypedPredicateFuncs is NewPredicateFuncs for objects of a concrete
// type. An event without an object (nil, or a nil pointer) is dropped.
func NewTypedPredicateFuncs[object any](filter func(object) bool) TypedFuncs[object] {
	return TypedFuncs[object]{
		CreateFunc:  func(e handler.TypedCreateEvent[object]) bool { return !isNil(e.Object) && filter(e.Object) },
		UpdateFunc:  func(e handler.TypedUpdateEvent[object]) bool { return !isNil(e.ObjectNew) && filter(e.ObjectNew) },
		DeleteFunc:  func(e handler.TypedDeleteEvent[object]) bool { return !isNil(e.Object) && filter(e.Object) },
		GenericFunc: func(e handler.TypedGenericEvent[object]) bool { return !isNil(e.Object) && filter(e.Object) },
	}
}

// isNil reports whether v is a nil interface or a nil pointer.
func isNil[T any](v T) bool {
	a := any(v)
	if a == nil {
		return true
	}
	rv := reflect.ValueOf(a)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// bothObjects reports whether an update carries its old and new object.
func bothObjects[T any](e handler.TypedUpdateEvent[T]) bool {
	return !isNil(e.ObjectOld) && !isNil(e.ObjectNew)
}

// TypedResourceVersionChangedPredicate handles updates whose
// resourceVersion changed, dropping resyncs; other events pass.
type TypedResourceVersionChangedPredicate[object metav1.Object] struct{ TypedFuncs[object] }

// ResourceVersionChangedPredicate is the
// TypedResourceVersionChangedPredicate of client.Object.
type ResourceVersionChangedPredicate = TypedResourceVersionChangedPredicate[client.Object]

// Update reports whether the resourceVersion changed.
func (TypedResourceVersionChangedPredicate[T]) Update(e handler.TypedUpdateEvent[T]) bool {
	return bothObjects(e) && e.ObjectOld.GetResourceVersion() != e.ObjectNew.GetResourceVersion()
}

// TypedGenerationChangedPredicate handles updates whose
// metadata.generation changed: for kinds with a status subresource,
// changes of the spec but not of the status or metadata. Other events
// pass. Kinds without a generation (ConfigMaps, Secrets) never change it,
// so use it only with kinds that have one.
type TypedGenerationChangedPredicate[object metav1.Object] struct{ TypedFuncs[object] }

// GenerationChangedPredicate is the TypedGenerationChangedPredicate of
// client.Object.
type GenerationChangedPredicate = TypedGenerationChangedPredicate[client.Object]

// Update reports whether the generation changed.
func (TypedGenerationChangedPredicate[T]) Update(e handler.TypedUpdateEvent[T]) bool {
	return bothObjects(e) && e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration()
}

// TypedAnnotationChangedPredicate handles updates whose annotations
// changed; other events pass.
type TypedAnnotationChangedPredicate[object metav1.Object] struct{ TypedFuncs[object] }

// AnnotationChangedPredicate is the TypedAnnotationChangedPredicate of
// client.Object.
type AnnotationChangedPredicate = TypedAnnotationChangedPredicate[client.Object]

// Update reports whether the annotations changed.
func (TypedAnnotationChangedPredicate[T]) Update(e handler.TypedUpdateEvent[T]) bool {
	return bothObjects(e) && !maps.Equal(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations())
}

// TypedLabelChangedPredicate handles updates whose labels changed; other
// events pass.
type TypedLabelChangedPredicate[object metav1.Object] struct{ TypedFuncs[object] }

// LabelChangedPredicate is the TypedLabelChangedPredicate of client.Object.
type LabelChangedPredicate = TypedLabelChangedPredicate[client.Object]

// Update reports whether the labels changed.
func (TypedLabelChangedPredicate[T]) Update(e handler.TypedUpdateEvent[T]) bool {
	return bothObjects(e) && !maps.Equal(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
}

// LabelSelectorPredicate handles the events whose object (for an update,
// new object) matches s. It returns an error naming s if s is invalid.
func LabelSelectorPredicate(s metav1.LabelSelector) (Predicate, error) {
	sel, err := metav1.LabelSelectorAsSelector(&s)
	if err != nil {
		return nil, fmt.Errorf("predicate: invalid label selector: %w", err)
	}
	return NewPredicateFuncs(func(o client.Object) bool {
		return sel.Matches(labels.Set(o.GetLabels()))
	}), nil
}

var errNilPredicate = errors.New("predicate: nil Predicate")

// And handles an event when every predicate does; with none, every event.
// The object type is inferred from the predicates; with none, give it:
// predicate.And[client.Object]().
func And[object any](preds ...TypedPredicate[object]) TypedPredicate[object] {
	return and[object](preds)
}

// Or handles an event when any predicate does; with none, no event.
func Or[object any](preds ...TypedPredicate[object]) TypedPredicate[object] {
	return or[object](preds)
}

// Not handles an event when p does not. It panics if p is nil, a mistake
// of the program.
func Not[object any](p TypedPredicate[object]) TypedPredicate[object] {
	if p == nil {
		panic(errNilPredicate)
	}
	return not[object]{p}
}

type and[T any] []TypedPredicate[T]

func (a and[T]) Create(e handler.TypedCreateEvent[T]) bool {
	for _, p := range a {
		if !p.Create(e) {
			return false
		}
	}
	return true
}

func (a and[T]) Update(e handler.TypedUpdateEvent[T]) bool {
	for _, p := range a {
		if !p.Update(e) {
			return false
		}
	}
	return true
}

func (a and[T]) Delete(e handler.TypedDeleteEvent[T]) bool {
	for _, p := range a {
		if !p.Delete(e) {
			return false
		}
	}
	return true
}

func (a and[T]) Generic(e handler.TypedGenericEvent[T]) bool {
	for _, p := range a {
		if !p.Generic(e) {
			return false
		}
	}
	return true
}

type or[T any] []TypedPredicate[T]

func (o or[T]) Create(e handler.TypedCreateEvent[T]) bool {
	for _, p := range o {
		if p.Create(e) {
			return true
		}
	}
	return false
}

func (o or[T]) Update(e handler.TypedUpdateEvent[T]) bool {
	for _, p := range o {
		if p.Update(e) {
			return true
		}
	}
	return false
}

func (o or[T]) Delete(e handler.TypedDeleteEvent[T]) bool {
	for _, p := range o {
		if p.Delete(e) {
			return true
		}
	}
	return false
}

func (o or[T]) Generic(e handler.TypedGenericEvent[T]) bool {
	for _, p := range o {
		if p.Generic(e) {
			return true
		}
	}
	return false
}

type not[T any] struct{ p TypedPredicate[T] }

func (n not[T]) Create(e handler.TypedCreateEvent[T]) bool   { return !n.p.Create(e) }
func (n not[T]) Update(e handler.TypedUpdateEvent[T]) bool   { return !n.p.Update(e) }
func (n not[T]) Delete(e handler.TypedDeleteEvent[T]) bool   { return !n.p.Delete(e) }
func (n not[T]) Generic(e handler.TypedGenericEvent[T]) bool { return !n.p.Generic(e) }
