// Package predicate filters events before they reach an EventHandler.
//
// A Predicate answers, per event, whether the event should be handled.
// Sources evaluate their predicates in order and stop at the first false.
// The names are controller-runtime's: Funcs, NewPredicateFuncs,
// GenerationChangedPredicate, ResourceVersionChangedPredicate,
// LabelChangedPredicate, AnnotationChangedPredicate, LabelSelectorPredicate,
// And, Or and Not.
//
// Each has its typed form, controller-runtime's, for events of a concrete
// object type: TypedPredicate[object], TypedFuncs[object],
// NewTypedPredicateFuncs[object], TypedGenerationChangedPredicate[object],
// TypedResourceVersionChangedPredicate[object],
// TypedAnnotationChangedPredicate[object] and
// TypedLabelChangedPredicate[object]; And, Or and Not are generic and infer
// the type from their arguments. The untyped names are aliases of the
// client.Object forms (Predicate is TypedPredicate[client.Object]).
// source.Kind accepts typed predicates beside a typed handler of the same
// object type and hands them each event's objects asserted to it.
//
// Guarantees:
//   - Predicates are pure functions of the event: no I/O, no state, safe for
//     concurrent use.
//   - A nil function in Funcs lets its events through.
//   - The *ChangedPredicate types filter only updates; an update missing its
//     old or new object is dropped.
//   - Predicates reduce reconciles, not memory: the cache still holds every
//     object of the watched kind.
package predicate
