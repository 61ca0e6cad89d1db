package source

import (
	"context"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/reconcile"
)

// untypedHandler returns h as the EventHandler that Kind's informer
// callbacks call: h itself when its object type is client.Object, else an
// adapter that asserts each event's objects to T and drops an event whose
// object is not a T.
func untypedHandler[T client.Object](h handler.TypedEventHandler[T, reconcile.Request]) handler.EventHandler {
	if eh, ok := any(h).(handler.EventHandler); ok {
		return eh
	}
	return typedHandler[T]{h}
}

type typedHandler[T client.Object] struct {
	h handler.TypedEventHandler[T, reconcile.Request]
}

var _ handler.EventHandler = typedHandler[client.Object]{}

func (t typedHandler[T]) Create(ctx context.Context, evt handler.CreateEvent, q handler.Queue) {
	if o, ok := evt.Object.(T); ok {
		t.h.Create(ctx, handler.TypedCreateEvent[T]{Object: o, IsInInitialList: evt.IsInInitialList, CatchUp: evt.CatchUp}, q)
	}
}

func (t typedHandler[T]) Update(ctx context.Context, evt handler.UpdateEvent, q handler.Queue) {
	o, ok := evt.ObjectOld.(T)
	if !ok {
		return
	}
	if n, ok := evt.ObjectNew.(T); ok {
		t.h.Update(ctx, handler.TypedUpdateEvent[T]{ObjectOld: o, ObjectNew: n, CatchUp: evt.CatchUp}, q)
	}
}

func (t typedHandler[T]) Delete(ctx context.Context, evt handler.DeleteEvent, q handler.Queue) {
	if o, ok := evt.Object.(T); ok {
		t.h.Delete(ctx, handler.TypedDeleteEvent[T]{Object: o, DeleteStateUnknown: evt.DeleteStateUnknown, CatchUp: evt.CatchUp}, q)
	}
}

func (t typedHandler[T]) Generic(ctx context.Context, evt handler.GenericEvent, q handler.Queue) {
	if o, ok := evt.Object.(T); ok {
		t.h.Generic(ctx, handler.TypedGenericEvent[T]{Object: o}, q)
	}
}

// untypedPredicate returns p as a Predicate: p itself when its object
// type is client.Object, else an adapter that asserts each event's objects
// to T and drops an event whose object is not a T.
func untypedPredicate[T client.Object](p predicate.TypedPredicate[T]) predicate.Predicate {
	if up, ok := any(p).(predicate.Predicate); ok {
		return up
	}
	return typedPredicate[T]{p}
}

type typedPredicate[T client.Object] struct{ p predicate.TypedPredicate[T] }

var _ predicate.Predicate = typedPredicate[client.Object]{}

func (t typedPredicate[T]) Create(evt handler.CreateEvent) bool {
	o, ok := evt.Object.(T)
	return ok && t.p.Create(handler.TypedCreateEvent[T]{Object: o, IsInInitialList: evt.IsInInitialList, CatchUp: evt.CatchUp})
}

func (t typedPredicate[T]) Update(evt handler.UpdateEvent) bool {
	o, ok := evt.ObjectOld.(T)
	if !ok {
		return false
	}
	n, ok := evt.ObjectNew.(T)
	return ok && t.p.Update(handler.TypedUpdateEvent[T]{ObjectOld: o, ObjectNew: n, CatchUp: evt.CatchUp})
}

func (t typedPredicate[T]) Delete(evt handler.DeleteEvent) bool {
	o, ok := evt.Object.(T)
	return ok && t.p.Delete(handler.TypedDeleteEvent[T]{Object: o, DeleteStateUnknown: evt.DeleteStateUnknown, CatchUp: evt.CatchUp})
}

func (t typedPredicate[T]) Generic(evt handler.GenericEvent) bool {
	o, ok := evt.Object.(T)
	return ok && t.p.Generic(handler.TypedGenericEvent[T]{Object: o})
}
