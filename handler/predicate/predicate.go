package predicate

import (
	"errors"
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/handler"
)

// Predicate decides whether an event is handled.
type Predicate interface {
	// Create reports whether a CreateEvent is handled.
	Create(handler.CreateEvent) bool
	// Update reports whether an UpdateEvent is handled.
	Update(handler.UpdateEvent) bool
	// Delete reports whether a DeleteEvent is handled.
	Delete(handler.DeleteEvent) bool
	// Generic reports whether a GenericEvent is handled.
	Generic(handler.GenericEvent) bool
}

// Funcs is a Predicate made of functions; a nil function returns true.
type Funcs struct {
	// CreateFunc filters CreateEvents.
	CreateFunc func(handler.CreateEvent) bool
	// UpdateFunc filters UpdateEvents.
	UpdateFunc func(handler.UpdateEvent) bool
	// DeleteFunc filters DeleteEvents.
	DeleteFunc func(handler.DeleteEvent) bool
	// GenericFunc filters GenericEvents.
	GenericFunc func(handler.GenericEvent) bool
}

var _ Predicate = Funcs{}

// Create calls CreateFunc, or returns true if it is nil.
func (p Funcs) Create(e handler.CreateEvent) bool { return p.CreateFunc == nil || p.CreateFunc(e) }

// Update calls UpdateFunc, or returns true if it is nil.
func (p Funcs) Update(e handler.UpdateEvent) bool { return p.UpdateFunc == nil || p.UpdateFunc(e) }

// Delete calls DeleteFunc, or returns true if it is nil.
func (p Funcs) Delete(e handler.DeleteEvent) bool { return p.DeleteFunc == nil || p.DeleteFunc(e) }

// Generic calls GenericFunc, or returns true if it is nil.
func (p Funcs) Generic(e handler.GenericEvent) bool { return p.GenericFunc == nil || p.GenericFunc(e) }

// NewPredicateFuncs returns a Predicate that applies filter to the object of
// every event; for an update, to the new object.
func NewPredicateFuncs(filter func(client.Object) bool) Funcs {
	return Funcs{
		CreateFunc:  func(e handler.CreateEvent) bool { return e.Object != nil && filter(e.Object) },
		UpdateFunc:  func(e handler.UpdateEvent) bool { return e.ObjectNew != nil && filter(e.ObjectNew) },
		DeleteFunc:  func(e handler.DeleteEvent) bool { return e.Object != nil && filter(e.Object) },
		GenericFunc: func(e handler.GenericEvent) bool { return e.Object != nil && filter(e.Object) },
	}
}

// bothObjects reports whether an update carries its old and new object.
func bothObjects(e handler.UpdateEvent) bool { return e.ObjectOld != nil && e.ObjectNew != nil }

// ResourceVersionChangedPredicate handles updates whose resourceVersion
// changed, dropping resyncs; other events pass.
type ResourceVersionChangedPredicate struct{ Funcs }

// Update reports whether the resourceVersion changed.
func (ResourceVersionChangedPredicate) Update(e handler.UpdateEvent) bool {
	return bothObjects(e) && e.ObjectOld.GetResourceVersion() != e.ObjectNew.GetResourceVersion()
}

// GenerationChangedPredicate handles updates whose metadata.generation
// changed: for kinds with a status subresource, changes of the spec but not
// of the status or metadata. Other events pass. Kinds without a generation
// (ConfigMaps, Secrets) never change it, so use it only with kinds that
// have one.
type GenerationChangedPredicate struct{ Funcs }

// Update reports whether the generation changed.
func (GenerationChangedPredicate) Update(e handler.UpdateEvent) bool {
	return bothObjects(e) && e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration()
}

// AnnotationChangedPredicate handles updates whose annotations changed;
// other events pass.
type AnnotationChangedPredicate struct{ Funcs }

// Update reports whether the annotations changed.
func (AnnotationChangedPredicate) Update(e handler.UpdateEvent) bool {
	return bothObjects(e) && !maps.Equal(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations())
}

// LabelChangedPredicate handles updates whose labels changed; other events
// pass.
type LabelChangedPredicate struct{ Funcs }

// Update reports whether the labels changed.
func (LabelChangedPredicate) Update(e handler.UpdateEvent) bool {
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
func And(preds ...Predicate) Predicate { return and(preds) }

// Or handles an event when any predicate does; with none, no event.
func Or(preds ...Predicate) Predicate { return or(preds) }

// Not handles an event when p does not.
func Not(p Predicate) Predicate {
	if p == nil {
		panic(errNilPredicate)
	}
	return not{p}
}

type and []Predicate

func (a and) Create(e handler.CreateEvent) bool {
	for _, p := range a {
		if !p.Create(e) {
			return false
		}
	}
	return true
}

func (a and) Update(e handler.UpdateEvent) bool {
	for _, p := range a {
		if !p.Update(e) {
			return false
		}
	}
	return true
}

func (a and) Delete(e handler.DeleteEvent) bool {
	for _, p := range a {
		if !p.Delete(e) {
			return false
		}
	}
	return true
}

func (a and) Generic(e handler.GenericEvent) bool {
	for _, p := range a {
		if !p.Generic(e) {
			return false
		}
	}
	return true
}

type or []Predicate

func (o or) Create(e handler.CreateEvent) bool {
	for _, p := range o {
		if p.Create(e) {
			return true
		}
	}
	return false
}

func (o or) Update(e handler.UpdateEvent) bool {
	for _, p := range o {
		if p.Update(e) {
			return true
		}
	}
	return false
}

func (o or) Delete(e handler.DeleteEvent) bool {
	for _, p := range o {
		if p.Delete(e) {
			return true
		}
	}
	return false
}

func (o or) Generic(e handler.GenericEvent) bool {
	for _, p := range o {
		if p.Generic(e) {
			return true
		}
	}
	return false
}

type not struct{ p Predicate }

func (n not) Create(e handler.CreateEvent) bool   { return !n.p.Create(e) }
func (n not) Update(e handler.UpdateEvent) bool   { return !n.p.Update(e) }
func (n not) Delete(e handler.DeleteEvent) bool   { return !n.p.Delete(e) }
func (n not) Generic(e handler.GenericEvent) bool { return !n.p.Generic(e) }
