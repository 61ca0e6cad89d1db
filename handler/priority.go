package handler

import (
	"context"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

// isResync reports whether an update changed nothing: old and new carry the
// same resourceVersion.
func isResync(evt UpdateEvent) bool {
	return evt.ObjectOld != nil && evt.ObjectNew != nil &&
		evt.ObjectOld.GetResourceVersion() == evt.ObjectNew.GetResourceVersion()
}

// lowPriorityOpts are the add options of initial-list and resync requests.
var lowPriorityOpts = workqueue.AddOpts{Priority: LowPriority}

// add adds reqs to q, at LowPriority when low is true.
func add(q Queue, low bool, reqs ...reconcile.Request) {
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
// built-in handlers do. Other events pass through unchanged.
func WithLowPriorityWhenUnchanged(h EventHandler) EventHandler {
	return lowPriorityHandler{h}
}

type lowPriorityHandler struct{ EventHandler }

func (h lowPriorityHandler) Create(ctx context.Context, evt CreateEvent, q Queue) {
	if evt.IsInInitialList {
		q = lowPriorityQueue{q}
	}
	h.EventHandler.Create(ctx, evt, q)
}

func (h lowPriorityHandler) Update(ctx context.Context, evt UpdateEvent, q Queue) {
	if isResync(evt) {
		q = lowPriorityQueue{q}
	}
	h.EventHandler.Update(ctx, evt, q)
}

// lowPriorityQueue adds at LowPriority unless told a priority.
type lowPriorityQueue struct{ Queue }

func (q lowPriorityQueue) Add(req reconcile.Request) { q.Queue.AddWithOpts(lowPriorityOpts, req) }

func (q lowPriorityQueue) AddWithOpts(opts workqueue.AddOpts, reqs ...reconcile.Request) {
	if opts.Priority == 0 {
		opts.Priority = LowPriority
	}
	q.Queue.AddWithOpts(opts, reqs...)
}
