package source

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/trace"
	"github.com/kubeloop/kubeloop/workqueue"
)

// eventHandler adapts client-go informer callbacks to a handler.EventHandler.
// It holds the context of the source's Start: callbacks have none of their
// own, and the registration ends with it.
type eventHandler struct {
	ctx     context.Context
	queue   handler.Queue
	handler handler.EventHandler
	preds   []predicate.Predicate
	kind    string
	// traced is queue as an EventQueue when it is one (a traced
	// controller's; trace.go), else nil.
	traced EventQueue
}

var _ toolscache.ResourceEventHandler = (*eventHandler)(nil)

func (e *eventHandler) OnAdd(obj any, isInInitialList bool) {
	e.create(obj, handler.CreateEvent{IsInInitialList: isInInitialList})
}

// OnCatchUpAdd is called by kubeloop's informer instead of OnAdd for an
// add that is the catch-up after an outage (a relist found it, or a
// resumed watch replayed it): the CreateEvent has CatchUp set.
func (e *eventHandler) OnCatchUpAdd(obj any) {
	e.create(obj, handler.CreateEvent{CatchUp: true})
}

// create hands evt, with obj as its object, to the predicates and the
// handler.
func (e *eventHandler) create(obj any, evt handler.CreateEvent) {
	o, ok := obj.(client.Object)
	if !ok {
		e.drop("create", obj)
		return
	}
	evt.Object = o
	for _, p := range e.preds {
		if !p.Create(evt) {
			return
		}
	}
	q := e.queue
	if e.traced != nil {
		ev := traceEvent(trace.EventCreate, e.kind, o)
		ev.InitialList, ev.CatchUp = evt.IsInInitialList, evt.CatchUp
		q = e.traced.ForEvent(ev)
	}
	e.handler.Create(e.ctx, evt, q)
}

// Expect passes on the informer's announcement that it is about to hand
// over n objects (its store, to a handler just added) to the queue, if
// it takes one (workqueue.Queue.Expect): each object usually becomes one
// new key.
func (e *eventHandler) Expect(n int) {
	if q, ok := e.queue.(workqueue.Expecter); ok {
		q.Expect(n)
	}
}

func (e *eventHandler) OnUpdate(oldObj, newObj any) { e.update(oldObj, newObj, false) }

// OnCatchUpUpdate is called by kubeloop's informer instead of OnUpdate for
// an update that is the catch-up after an outage: the UpdateEvent has
// CatchUp set.
func (e *eventHandler) OnCatchUpUpdate(oldObj, newObj any) { e.update(oldObj, newObj, true) }

// update hands the UpdateEvent of oldObj and newObj to the predicates and
// the handler.
func (e *eventHandler) update(oldObj, newObj any, catchUp bool) {
	o, ok := oldObj.(client.Object)
	if !ok {
		e.drop("update", oldObj)
		return
	}
	n, ok := newObj.(client.Object)
	if !ok {
		e.drop("update", newObj)
		return
	}
	evt := handler.UpdateEvent{ObjectOld: o, ObjectNew: n, CatchUp: catchUp}
	for _, p := range e.preds {
		if !p.Update(evt) {
			return
		}
	}
	q := e.queue
	if e.traced != nil {
		ev := traceEvent(trace.EventUpdate, e.kind, n)
		ev.CatchUp = catchUp
		q = e.traced.ForEvent(ev)
	}
	e.handler.Update(e.ctx, evt, q)
}

func (e *eventHandler) OnDelete(obj any) { e.delete(obj, false) }

// OnCatchUpDelete is called by kubeloop's informer instead of OnDelete for
// a delete that is the catch-up after an outage: the DeleteEvent has
// CatchUp set.
func (e *eventHandler) OnCatchUpDelete(obj any) { e.delete(obj, true) }

// delete hands the DeleteEvent of obj, which may be a tombstone, to the
// predicates and the handler.
func (e *eventHandler) delete(obj any, catchUp bool) {
	evt := handler.DeleteEvent{CatchUp: catchUp}
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		evt.DeleteStateUnknown = true
		obj = tomb.Obj
	}
	o, ok := obj.(client.Object)
	if !ok {
		e.drop("delete", obj)
		return
	}
	evt.Object = o
	for _, p := range e.preds {
		if !p.Delete(evt) {
			return
		}
	}
	q := e.queue
	if e.traced != nil {
		ev := traceEvent(trace.EventDelete, e.kind, o)
		ev.CatchUp = catchUp
		q = e.traced.ForEvent(ev)
	}
	e.handler.Delete(e.ctx, evt, q)
}

// drop logs an informer object that is not a client.Object.
func (e *eventHandler) drop(event string, obj any) {
	logr.FromContextOrDiscard(e.ctx).Error(nil, "dropping event: object is not a client.Object",
		"event", event, "kind", e.kind, "type", typeName(obj))
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

var _ workqueue.Expecter = (*eventHandler)(nil)
