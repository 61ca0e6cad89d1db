// Package handler turns watch events into reconcile requests.
//
// A source (controller/source) delivers CreateEvent, UpdateEvent,
// DeleteEvent and GenericEvent values to an EventHandler, which adds
// reconcile.Requests to the controller's queue. The built-in handlers are
// those of controller-runtime:
//
//   - EnqueueRequestForObject enqueues the object itself.
//   - EnqueueRequestForOwner enqueues the owner named in the object's
//     ownerReferences: by default only the controller owner, every owner of
//     the type with AllOwners().
//   - EnqueueRequestsFromMapFunc enqueues whatever a MapFunc returns.
//   - Funcs calls the functions it holds; a nil function ignores the event.
//
// Guarantees of the built-in handlers:
//   - Events from the informer's initial list (CreateEvent.IsInInitialList)
//     and resyncs (an UpdateEvent whose old and new resourceVersion are
//     equal) are added at LowPriority, so that a controller starting up or
//     resyncing serves real changes first. WithLowPriorityWhenUnchanged gives
//     a custom handler the same behaviour.
//   - On an update, the owner and map-func handlers map both the old and the
//     new object and enqueue the union, so that a change of owner or of a
//     mapped field reaches both the old and the new target.
//   - An event without an object is ignored.
//   - Handlers never block: the queue de-duplicates and returns at once.
package handler
