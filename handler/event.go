package handler

import (
	toolsworkqueue "k8s.io/client-go/util/workqueue"

	"context"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

// TypedCreateEvent reports an object that appeared in the cache. Its
// object type is a parameter, as in controller-runtime's pkg/event;
// CreateEvent is its client.Object form, the one kubeloop's sources
// deliver.
type TypedCreateEvent[object any] struct {
	// Object is the new object.
	Object object
	// IsInInitialList is true when the object came with the informer's
	// initial list rather than with a watch event.
	IsInInitialList bool
	// CatchUp is true when the object was created while the informer was
	// cut off from the API server, and the informer learnt of it on its
	// way back (see UpdateEvent.CatchUp). It is never set together with
	// IsInInitialList. kubeloop only; controller-runtime's event has no
	// such field.
	CatchUp bool
}

// TypedUpdateEvent reports a change of an object. ObjectOld and ObjectNew
// have the same resourceVersion when the event is a resync (or a relist
// that found the object unchanged).
type TypedUpdateEvent[object any] struct {
	// ObjectOld is the object before the change.
	ObjectOld object
	// ObjectNew is the object after the change.
	ObjectNew object
	// CatchUp is true when the change is part of the backlog an outage
	// left rather than news: the informer learnt of it on its way back to
	// the API server, from a relist (after its watch failed: a 410 Gone,
	// a long cut, an API server restart) or from the replay of a watch
	// resumed after a gap, up to the server's resourceVersion when the
	// informer reached it again. The built-in handlers add it at
	// LowPriority, behind fresh watch events. kubeloop's cache sets it;
	// controller-runtime's event has no such field.
	CatchUp bool
}

// TypedDeleteEvent reports an object that left the cache.
type TypedDeleteEvent[object any] struct {
	// Object is the last state of the object the cache knew.
	Object object
	// DeleteStateUnknown is true when the delete was noticed by a relist
	// rather than by a watch event, so Object may be stale. CatchUp is
	// then true as well.
	DeleteStateUnknown bool
	// CatchUp is true when the delete is part of the backlog an outage
	// left (see UpdateEvent.CatchUp); the built-in handlers add it at
	// LowPriority. kubeloop only.
	CatchUp bool
}

// TypedGenericEvent reports an object from outside the cluster's watch
// stream, for example from source.Channel.
type TypedGenericEvent[object any] struct {
	// Object is the object to act on; only its namespace and name may be
	// set.
	Object object
}

// CreateEvent is the TypedCreateEvent of a client.Object.
type CreateEvent = TypedCreateEvent[client.Object]

// UpdateEvent is the TypedUpdateEvent of a client.Object.
type UpdateEvent = TypedUpdateEvent[client.Object]

// DeleteEvent is the TypedDeleteEvent of a client.Object.
type DeleteEvent = TypedDeleteEvent[client.Object]

// GenericEvent is the TypedGenericEvent of a client.Object.
type GenericEvent = TypedGenericEvent[client.Object]

// TypedQueue is the queue handlers add requests of type request to. It is
// client-go's TypedRateLimitingInterface, the type controller-runtime's
// handlers take, so handlers written for controller-runtime compile
// unchanged and their tests can pass any client-go queue.
// *workqueue.Queue[request], the controller's queue, is one. Handlers add
// with Add, AddAfter and AddRateLimited, or with priorities through
// AddWithOpts; they never call Get, Done or ShutDown.
type TypedQueue[request comparable] = toolsworkqueue.TypedRateLimitingInterface[request]

// Queue is the queue of a controller: a TypedQueue of reconcile.Request.
type Queue = TypedQueue[reconcile.Request]

// TypedPriorityQueue is a TypedQueue that takes add options (a priority,
// a delay, rate limiting); the controller's queue is one.
type TypedPriorityQueue[request comparable] interface {
	TypedQueue[request]
	// AddWithOpts adds reqs with opts.
	AddWithOpts(opts workqueue.AddOpts, reqs ...request)
}

// AddWithOpts adds reqs to q with opts: through q's own AddWithOpts when q
// is a TypedPriorityQueue (the controller's queue is), else with AddAfter
// when opts has a delay, AddRateLimited when it asks for rate limiting,
// and Add otherwise (such a queue has no priorities).
func AddWithOpts[request comparable](q TypedQueue[request], opts workqueue.AddOpts, reqs ...request) {
	if pq, ok := q.(TypedPriorityQueue[request]); ok {
		pq.AddWithOpts(opts, reqs...)
		return
	}
	for _, r := range reqs {
		switch {
		case opts.After > 0:
			q.AddAfter(r, opts.After)
		case opts.RateLimited:
			q.AddRateLimited(r)
		default:
			q.Add(r)
		}
	}
}

var _ TypedPriorityQueue[reconcile.Request] = (*workqueue.Queue[reconcile.Request])(nil)

// LowPriority is the priority of requests from the initial list, from
// relists and from resyncs.
const LowPriority = workqueue.LowPriority

// TypedEventHandler turns events about objects of type object into
// requests of type request on a TypedQueue. Its methods must not block.
//
// kubeloop's sources deliver client.Object events to an EventHandler (the
// TypedEventHandler[client.Object, reconcile.Request]); source.Kind and
// source.Channel accept a TypedEventHandler of a concrete object type too
// and hand it each event's objects asserted to that type. Controllers
// queue reconcile.Request only: a handler of another request type is
// refused when the controller is built.
type TypedEventHandler[object any, request comparable] interface {
	// Create is called for a CreateEvent.
	Create(ctx context.Context, evt TypedCreateEvent[object], q TypedQueue[request])
	// Update is called for an UpdateEvent.
	Update(ctx context.Context, evt TypedUpdateEvent[object], q TypedQueue[request])
	// Delete is called for a DeleteEvent.
	Delete(ctx context.Context, evt TypedDeleteEvent[object], q TypedQueue[request])
	// Generic is called for a GenericEvent.
	Generic(ctx context.Context, evt TypedGenericEvent[object], q TypedQueue[request])
}

// EventHandler turns events into requests on a Queue: the
// TypedEventHandler of client.Object and reconcile.Request.
type EventHandler = TypedEventHandler[client.Object, reconcile.Request]

// TypedFuncs is a TypedEventHandler made of functions; a nil function
// ignores its event.
type TypedFuncs[object any, request comparable] struct {
	// CreateFunc is called for a CreateEvent.
	CreateFunc func(context.Context, TypedCreateEvent[object], TypedQueue[request])
	// UpdateFunc is called for an UpdateEvent.
	UpdateFunc func(context.Context, TypedUpdateEvent[object], TypedQueue[request])
	// DeleteFunc is called for a DeleteEvent.
	DeleteFunc func(context.Context, TypedDeleteEvent[object], TypedQueue[request])
	// GenericFunc is called for a GenericEvent.
	GenericFunc func(context.Context, TypedGenericEvent[object], TypedQueue[request])
}

// Funcs is the TypedFuncs of client.Object and reconcile.Request.
type Funcs = TypedFuncs[client.Object, reconcile.Request]

var _ EventHandler = Funcs{}

// Create calls CreateFunc, if set.
func (f TypedFuncs[object, request]) Create(ctx context.Context, evt TypedCreateEvent[object], q TypedQueue[request]) {
	if f.CreateFunc != nil {
		f.CreateFunc(ctx, evt, q)
	}
}

// Update calls UpdateFunc, if set.
func (f TypedFuncs[object, request]) Update(ctx context.Context, evt TypedUpdateEvent[object], q TypedQueue[request]) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(ctx, evt, q)
	}
}

// Delete calls DeleteFunc, if set.
func (f TypedFuncs[object, request]) Delete(ctx context.Context, evt TypedDeleteEvent[object], q TypedQueue[request]) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(ctx, evt, q)
	}
}

// Generic calls GenericFunc, if set.
func (f TypedFuncs[object, request]) Generic(ctx context.Context, evt TypedGenericEvent[object], q TypedQueue[request]) {
	if f.GenericFunc != nil {
		f.GenericFunc(ctx, evt, q)
	}
}
