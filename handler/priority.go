package handler

import (
	"context"
	"time"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

// The built-in handlers add at LowPriority what is backlog rather than
// news: the initial list (at a cold start everything is backlog, as in
// controller-runtime's priority queue), the catch-up after an outage (what
// a relist found, or a resumed watch replayed: the events' CatchUp), and
// resyncs. Fresh watch events stay
// at normal priority and are served first; a request added low and then
// again by a fresh event is raised (the queue keeps a key's highest
// priority), and one left low is served after the queue's AgeAfter at the
// latest.

// lowCreate reports whether a create is backlog.
func lowCreate[T any](evt TypedCreateEvent[T]) bool { return evt.IsInInitialList || evt.CatchUp }

// lowUpdate reports whether an update is backlog: catch-up, or a resync.
func lowUpdate[T client.Object](evt TypedUpdateEvent[T]) bool { return evt.CatchUp || isResync(evt) }

// lowDelete reports whether a delete is backlog: catch-up, or noticed by a
// relist (a tombstone, whoever delivered it).
func lowDelete[T any](evt TypedDeleteEvent[T]) bool { return evt.CatchUp || evt.DeleteStateUnknown }

// isResync reports whether an update changed nothing: old and new carry the
// same resourceVersion.
func isResync[T client.Object](evt TypedUpdateEvent[T]) bool {
	return !isNil(evt.ObjectOld) && !isNil(evt.ObjectNew) &&
		evt.ObjectOld.GetResourceVersion() == evt.ObjectNew.GetResourceVersion()
}

// lowUpdateAny is lowUpdate for objects of any type: a resync only when
// both are client.Objects.
func lowUpdateAny[T any](evt TypedUpdateEvent[T]) bool {
	if evt.CatchUp {
		return true
	}
	if isNil(evt.ObjectOld) || isNil(evt.ObjectNew) {
		return false
	}
	o, ok := any(evt.ObjectOld).(client.Object)
	if !ok {
		return false
	}
	n, ok := any(evt.ObjectNew).(client.Object)
	return ok && o.GetResourceVersion() == n.GetResourceVersion()
}

// lowPriorityOpts are the add options of backlog requests.
var lowPriorityOpts = workqueue.AddOpts{Priority: LowPriority}

// add adds reqs to q, at LowPriority when low is true.
func add[R comparable](q TypedQueue[R], low bool, reqs ...R) {
	if len(reqs) == 0 {
		return
	}
	if low {
		AddWithOpts(q, lowPriorityOpts, reqs...)
		return
	}
	if len(reqs) == 1 {
		q.Add(reqs[0])
		return
	}
	AddWithOpts(q, workqueue.AddOpts{}, reqs...)
}

// addOne adds req to q, at LowPriority when low is true. Unlike add, it
// builds no slice of requests, which a call through the Queue interface
// would allocate for every event.
func addOne(q Queue, low bool, req reconcile.Request) {
	if low {
		if pq, ok := q.(TypedPriorityQueue[reconcile.Request]); ok {
			pq.AddWithOpts(lowPriorityOpts, req)
			return
		}
	}
	q.Add(req)
}

// requestFor returns the request naming obj.
func requestFor(obj client.Object) reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)}
}

// WithLowPriorityWhenUnchanged wraps h so that the requests it adds for
// backlog go in at LowPriority, as the built-in handlers do: initial-list
// creates, resyncs, and (kubeloop only) the catch-up after an outage
// (CreateEvent.CatchUp, UpdateEvent.CatchUp, DeleteEvent.CatchUp and
// DeleteStateUnknown). Requests that h adds with a priority of
// its own keep it. Other events pass through unchanged. The type
// parameters are controller-runtime's; they are inferred from h.
func WithLowPriorityWhenUnchanged[object client.Object, request comparable](h TypedEventHandler[object, request]) TypedEventHandler[object, request] {
	return lowPriorityHandler[object, request]{h}
}

type lowPriorityHandler[object client.Object, request comparable] struct {
	TypedEventHandler[object, request]
}

func (h lowPriorityHandler[T, R]) Create(ctx context.Context, evt TypedCreateEvent[T], q TypedQueue[R]) {
	if lowCreate(evt) {
		q = lowPriorityQueue[R]{q}
	}
	h.TypedEventHandler.Create(ctx, evt, q)
}

func (h lowPriorityHandler[T, R]) Update(ctx context.Context, evt TypedUpdateEvent[T], q TypedQueue[R]) {
	if lowUpdate(evt) {
		q = lowPriorityQueue[R]{q}
	}
	h.TypedEventHandler.Update(ctx, evt, q)
}

func (h lowPriorityHandler[T, R]) Delete(ctx context.Context, evt TypedDeleteEvent[T], q TypedQueue[R]) {
	if lowDelete(evt) {
		q = lowPriorityQueue[R]{q}
	}
	h.TypedEventHandler.Delete(ctx, evt, q)
}

// lowPriorityQueue adds at LowPriority unless told a priority (a queue
// without priorities is given the adds as they are).
type lowPriorityQueue[R comparable] struct{ TypedQueue[R] }

func (q lowPriorityQueue[R]) Add(req R) { AddWithOpts(q.TypedQueue, lowPriorityOpts, req) }

func (q lowPriorityQueue[R]) AddAfter(req R, d time.Duration) {
	AddWithOpts(q.TypedQueue, workqueue.AddOpts{Priority: LowPriority, After: d}, req)
}

func (q lowPriorityQueue[R]) AddRateLimited(req R) {
	AddWithOpts(q.TypedQueue, workqueue.AddOpts{Priority: LowPriority, RateLimited: true}, req)
}

func (q lowPriorityQueue[R]) AddWithOpts(opts workqueue.AddOpts, reqs ...R) {
	if opts.Priority == 0 {
		opts.Priority = LowPriority
	}
	AddWithOpts(q.TypedQueue, opts, reqs...)
}
