package handler

import (
	"context"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

// isResync reports whether an update changed nothing: old and new carry the
// same resourceVersion.
func isResync[T client.Object](evt TypedUpdateEvent[T]) bool {
	return !isNil(evt.ObjectOld) && !isNil(evt.ObjectNew) &&
		evt.ObjectOld.GetResourceVersion() == evt.ObjectNew.GetResourceVersion()
}

// isResyncAny is isResync for objects of any type: false unless both are
// client.Objects.
func isResyncAny[T any](oldObj, newObj T) bool {
	if isNil(oldObj) || isNil(newObj) {
		return false
	}
	o, ok := any(oldObj).(client.Object)
	if !ok {
		return false
	}
	n, ok := any(newObj).(client.Object)
	return ok && o.GetResourceVersion() == n.GetResourceVersion()
}

// lowPriorityOpts are the add options of initial-list and resync requests.
var lowPriorityOpts = workqueue.AddOpts{Priority: LowPriority}

// add adds reqs to q, at LowPriority when low is true.
func add[R comparable](q TypedQueue[R], low bool, reqs ...R) {
	if len(reqs) == 0 {
		return
	}
	if low {
		q.AddWithOpts(lowPriorityOpts, reqs...)
		return
	}
	if len(reqs) == 1 {
		q.Add(reqs[0])
		return
	}
	q.AddWithOpts(workqueue.AddOpts{}, reqs...)
}

// addOne adds req to q, at LowPriority when low is true. Unlike add, it
// builds no slice of requests, which a call through the Queue interface
// would allocate for every event.
func addOne(q Queue, low bool, req reconcile.Request) {
	if low {
		q.AddWithOpts(lowPriorityOpts, req)
		return
	}
	q.Add(req)
}

// requestFor returns the request naming obj.
func requestFor(obj client.Object) reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)}
}

// WithLowPriorityWhenUnchanged wraps h so that the requests it adds for
// initial-list creates and for resyncs go in at LowPriority, as the
// built-in handlers do. Other events pass through unchanged. The type
// parameters are controller-runtime's; they are inferred from h.
func WithLowPriorityWhenUnchanged[object client.Object, request comparable](h TypedEventHandler[object, request]) TypedEventHandler[object, request] {
	return lowPriorityHandler[object, request]{h}
}

type lowPriorityHandler[object client.Object, request comparable] struct {
	TypedEventHandler[object, request]
}

func (h lowPriorityHandler[T, R]) Create(ctx context.Context, evt TypedCreateEvent[T], q TypedQueue[R]) {
	if evt.IsInInitialList {
		q = lowPriorityQueue[R]{q}
	}
	h.TypedEventHandler.Create(ctx, evt, q)
}

func (h lowPriorityHandler[T, R]) Update(ctx context.Context, evt TypedUpdateEvent[T], q TypedQueue[R]) {
	if isResync(evt) {
		q = lowPriorityQueue[R]{q}
	}
	h.TypedEventHandler.Update(ctx, evt, q)
}

// lowPriorityQueue adds at LowPriority unless told a priority.
type lowPriorityQueue[R comparable] struct{ TypedQueue[R] }

func (q lowPriorityQueue[R]) Add(req R) { q.TypedQueue.AddWithOpts(lowPriorityOpts, req) }

func (q lowPriorityQueue[R]) AddWithOpts(opts workqueue.AddOpts, reqs ...R) {
	if opts.Priority == 0 {
		opts.Priority = LowPriority
	}
	q.TypedQueue.AddWithOpts(opts, reqs...)
}
