package handler

import (
	"context"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/reconcile"
)

// TypedEnqueueRequestForObject enqueues a request naming the object of
// each event: the controller reconciles the kind it watches. On an update
// it enqueues the new object (the old one if the new one is missing). Use
// it as &handler.TypedEnqueueRequestForObject[*v1.Foo]{} with a typed
// source.Kind, or as its client.Object form, EnqueueRequestForObject.
type TypedEnqueueRequestForObject[object client.Object] struct{}

// EnqueueRequestForObject is the TypedEnqueueRequestForObject of
// client.Object. Use it as &handler.EnqueueRequestForObject{}.
type EnqueueRequestForObject = TypedEnqueueRequestForObject[client.Object]

var _ EventHandler = (*EnqueueRequestForObject)(nil)

// Create enqueues evt.Object.
func (*TypedEnqueueRequestForObject[T]) Create(_ context.Context, evt TypedCreateEvent[T], q Queue) {
	if isNil(evt.Object) {
		return
	}
	addOne(q, lowCreate(evt), requestFor(evt.Object))
}

// Update enqueues evt.ObjectNew, or evt.ObjectOld if ObjectNew is nil.
func (*TypedEnqueueRequestForObject[T]) Update(_ context.Context, evt TypedUpdateEvent[T], q Queue) {
	obj := evt.ObjectNew
	if isNil(obj) {
		obj = evt.ObjectOld
	}
	if isNil(obj) {
		return
	}
	addOne(q, lowUpdate(evt), requestFor(obj))
}

// Delete enqueues evt.Object.
func (*TypedEnqueueRequestForObject[T]) Delete(_ context.Context, evt TypedDeleteEvent[T], q Queue) {
	if isNil(evt.Object) {
		return
	}
	addOne(q, lowDelete(evt), requestFor(evt.Object))
}

// Generic enqueues evt.Object.
func (*TypedEnqueueRequestForObject[T]) Generic(_ context.Context, evt TypedGenericEvent[T], q Queue) {
	if isNil(evt.Object) {
		return
	}
	q.Add(requestFor(evt.Object))
}

// TypedMapFunc returns the requests an object maps to. It must not block;
// it may read from the cache.
type TypedMapFunc[object any, request comparable] func(context.Context, object) []request

// MapFunc is the TypedMapFunc of client.Object and reconcile.Request.
type MapFunc = TypedMapFunc[client.Object, reconcile.Request]

// EnqueueRequestsFromMapFunc returns a handler that enqueues the requests
// fn returns for the object of each event; on an update, the union of the
// requests of the old and the new object. Use it to reconcile an object
// when something it refers to (rather than something it owns) changes.
func EnqueueRequestsFromMapFunc(fn MapFunc) EventHandler {
	return &mapHandler[client.Object, reconcile.Request]{mapper: fn}
}

// TypedEnqueueRequestsFromMapFunc is EnqueueRequestsFromMapFunc for a
// function of a concrete object type (and, for controller-runtime's
// shape, a request type, which a controller accepts only as
// reconcile.Request).
func TypedEnqueueRequestsFromMapFunc[object any, request comparable](fn TypedMapFunc[object, request]) TypedEventHandler[object, request] {
	return &mapHandler[object, request]{mapper: fn}
}

type mapHandler[object any, request comparable] struct {
	mapper TypedMapFunc[object, request]
}

func (h *mapHandler[T, R]) Create(ctx context.Context, evt TypedCreateEvent[T], q TypedQueue[R]) {
	if isNil(evt.Object) {
		return
	}
	add(q, lowCreate(evt), h.mapper(ctx, evt.Object)...)
}

func (h *mapHandler[T, R]) Update(ctx context.Context, evt TypedUpdateEvent[T], q TypedQueue[R]) {
	var reqs []R
	if !isNil(evt.ObjectOld) {
		reqs = h.mapper(ctx, evt.ObjectOld)
	}
	if !isNil(evt.ObjectNew) {
		reqs = union(reqs, h.mapper(ctx, evt.ObjectNew))
	}
	add(q, lowUpdateAny(evt), reqs...)
}

func (h *mapHandler[T, R]) Delete(ctx context.Context, evt TypedDeleteEvent[T], q TypedQueue[R]) {
	if isNil(evt.Object) {
		return
	}
	add(q, lowDelete(evt), h.mapper(ctx, evt.Object)...)
}

func (h *mapHandler[T, R]) Generic(ctx context.Context, evt TypedGenericEvent[T], q TypedQueue[R]) {
	if isNil(evt.Object) {
		return
	}
	add(q, false, h.mapper(ctx, evt.Object)...)
}

// union returns the requests of a and b, each once. Request lists are
// short, so a linear scan beats a map. Neither input is modified.
func union[R comparable](a, b []R) []R {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make([]R, 0, len(a)+len(b))
	for _, list := range [2][]R{a, b} {
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
