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
// Typed forms, for code ported from controller-runtime: the event types
// are TypedCreateEvent, TypedUpdateEvent, TypedDeleteEvent and
// TypedGenericEvent of an object type (controller-runtime's pkg/event
// lives here), and each handler has a Typed form with controller-runtime's
// type parameters: TypedEventHandler[object, request], TypedFuncs,
// TypedEnqueueRequestForObject[object], TypedEnqueueRequestForOwner[object],
// TypedEnqueueRequestsFromMapFunc[object, request] with TypedMapFunc, and
// TypedQueue[request]. The untyped names are aliases of the client.Object
// and reconcile.Request forms (EventHandler is
// TypedEventHandler[client.Object, reconcile.Request], CreateEvent is
// TypedCreateEvent[client.Object], Queue is TypedQueue[reconcile.Request]),
// so there is one type per concept. TypedQueue is client-go's
// TypedRateLimitingInterface itself, as in controller-runtime: a handler
// written for controller-runtime compiles unchanged and its tests can pass
// a client-go queue. Priorities go through AddWithOpts, which uses the
// queue's own AddWithOpts when it is a TypedPriorityQueue (the
// controller's is) and plain adds otherwise. kubeloop's sources deliver
// client.Object events; source.Kind and source.Channel adapt a typed
// handler by asserting each event's objects to its type. A controller's
// queue holds reconcile.Request only: a handler of another request type
// compiles but is refused when the controller is built.
//
// Guarantees of the built-in handlers:
//   - Fresh changes first: backlog is added at LowPriority, fresh watch
//     events at normal priority, so that a controller starting up, catching
//     up after an outage or resyncing serves a change made now first.
//     Backlog is the informer's initial list (CreateEvent.IsInInitialList;
//     at a cold start everything is backlog, as in controller-runtime's
//     priority queue), the catch-up after an outage (CatchUp on every
//     event type: what a relist found after the watch failed, or what a
//     watch resumed after a gap replayed, up to the server's
//     resourceVersion when the informer reached it again), and resyncs (an UpdateEvent whose old and new
//     resourceVersion are equal). A request waiting at LowPriority that a
//     fresh event adds again is raised to normal priority; one left low is
//     served after the queue's AgeAfter (10 s by default) at the latest.
//     WithLowPriorityWhenUnchanged gives a custom handler the same
//     behaviour.
//   - On an update, the owner and map-func handlers map both the old and the
//     new object and enqueue the union, so that a change of owner or of a
//     mapped field reaches both the old and the new target.
//   - An event without an object (nil, or a nil pointer of a typed
//     handler's type) is ignored.
//   - Handlers never block: the queue de-duplicates and returns at once.
package handler
