package handler

import (
	"context"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/reconcile"
)

// EnqueueRequestForObject enqueues a request naming the object of each
// event: the controller reconciles the kind it watches. On an update it
// enqueues the new object (the old one if the new one is missing). Use it as
// &handler.EnqueueRequestForObject{}.
type EnqueueRequestForObject struct{}

var _ EventHandler = (*EnqueueRequestForObject)(nil)

// Create enqueues evt.Object.
func (*EnqueueRequestForObject) Create(_ context.Context, evt CreateEvent, q Queue) {
	if evt.Object == nil {
		return
	}
	addOne(q, evt.IsInInitialList, requestFor(evt.Object))
}

// Update enqueues evt.ObjectNew, or evt.ObjectOld if ObjectNew is nil.
func (*EnqueueRequestForObject) Update(_ context.Context, evt UpdateEvent, q Queue) {
	obj := evt.ObjectNew
	if obj == nil {
		obj = evt.ObjectOld
	}
	if obj == nil {
		return
	}
	addOne(q, isResync(evt), requestFor(obj))
}

// Delete enqueues evt.Object.
func (*EnqueueRequestForObject) Delete(_ context.Context, evt DeleteEvent, q Queue) {
	if evt.Object == nil {
		return
	}
	q.Add(requestFor(evt.Object))
}

// Generic enqueues evt.Object.
func (*EnqueueRequestForObject) Generic(_ context.Context, evt GenericEvent, q Queue) {
	if evt.Object == nil {
		return
	}
	q.Add(requestFor(evt.Object))
}

// MapFunc returns the requests an object maps to. It must not block; it may
// read from the cache.
type MapFunc func(context.Context, client.Object) []reconcile.Request

// EnqueueRequestsFromMapFunc returns a handler that enqueues the requests
// fn returns for the object of each event; on an update, the union of the
// requests of the old and the new object. Use it to reconcile an object
// when something it refers to (rather than something it owns) changes.
func EnqueueRequestsFromMapFunc(fn MapFunc) EventHandler {
	return &mapHandler{mapper: fn}
}

type mapHandler struct{ mapper MapFunc }

func (h *mapHandler) Create(ctx context.Context, evt CreateEvent, q Queue) {
	if evt.Object == nil {
		return
	}
	add(q, evt.IsInInitialList, h.mapper(ctx, evt.Object)...)
}

func (h *mapHandler) Update(ctx context.Context, evt UpdateEvent, q Queue) {
	var reqs []reconcile.Request
	if evt.ObjectOld != nil {
		reqs = h.mapper(ctx, evt.ObjectOld)
	}
	if evt.ObjectNew != nil {
		reqs = union(reqs, h.mapper(ctx, evt.ObjectNew))
	}
	add(q, isResync(evt), reqs...)
}

func (h *mapHandler) Delete(ctx context.Context, evt DeleteEvent, q Queue) {
	if evt.Object == nil {
		return
	}
	add(q, false, h.mapper(ctx, evt.Object)...)
}

func (h *mapHandler) Generic(ctx context.Context, evt GenericEvent, q Queue) {
	if evt.Object == nil {
		return
	}
	add(q, false, h.mapper(ctx, evt.Object)...)
}

// union returns the requests of a and b, each once. Request lists are
// short, so a linear scan beats a map. Neither input is modified.
func union(a, b []reconcile.Request) []reconcile.Request {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make([]reconcile.Request, 0, len(a)+len(b))
	for _, list := range [2][]reconcile.Request{a, b} {
	next:
		for _, r := range list {
			for _, s := range out {
				if r == s {
					continue next
				}
			}
			out = append(out, r)
		}
	}
	return out
}
