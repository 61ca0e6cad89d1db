// Package predicate filters events before they reach an EventHandler.
//
// A Predicate answers, per event, whether the event should be handled.
// Sources evaluate their predicates in order and stop at the first false.
// The names are controller-runtime's: Funcs, NewPredicateFuncs,
// GenerationChangedPredicate, ResourceVersionChangedPredicate,
// LabelChangedPredicate, AnnotationChangedPredicate, LabelSelectorPredicate,
// And, Or and Not.
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
