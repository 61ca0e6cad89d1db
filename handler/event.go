package handler

import (
	"context"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

// CreateEvent reports an object that appeared in the cache.
type CreateEvent struct {
	// Object is the new object.
	Object client.Object
	// IsInInitialList is true when the object came with the informer's
	// initial list rather than with a watch event.
	IsInInitialList bool
}

// UpdateEvent reports a change of an object. ObjectOld and ObjectNew have
// the same resourceVersion when the event is a resync.
type UpdateEvent struct {
	// ObjectOld is the object before the change.
	ObjectOld client.Object
	// ObjectNew is the object after the change.
	ObjectNew client.Object
}

// DeleteEvent reports an object that left the cache.
type DeleteEvent struct {
	// Object is the last state of the object the cache knew.
	Object client.Object
	// DeleteStateUnknown is true when the delete was noticed by a relist
	// rather than by a watch event, so Object may be stale.
	DeleteStateUnknown bool
}

// GenericEvent reports an object from outside the cluster's watch stream,
// for example from source.Channel.
type GenericEvent struct {
	// Object is the object to act on; only its namespace and name may be
	// set.
	Object client.Object
}

// Queue is the part of the controller's queue that handlers use.
// *workqueue.Queue[reconcile.Request] satisfies it.
type Queue interface {
	// Add adds req at normal priority; a request already waiting is not
	// added twice.
	Add(req reconcile.Request)
	// AddWithOpts adds reqs with a priority, a delay or rate limiting.
	AddWithOpts(opts workqueue.AddOpts, reqs ...reconcile.Request)
}

var _ Queue = (*workqueue.Queue[reconcile.Request])(nil)

// LowPriority is the priority of requests from the initial list and from
// resyncs.
const LowPriority = workqueue.LowPriority

// EventHandler turns events into requests on a Queue. Its methods must not
// block.
type EventHandler interface {
	// Create is called for a CreateEvent.
	Create(ctx context.Context, evt CreateEvent, q Queue)
	// Update is called for an UpdateEvent.
	Update(ctx context.Context, evt UpdateEvent, q Queue)
	// Delete is called for a DeleteEvent.
	Delete(ctx context.Context, evt DeleteEvent, q Queue)
	// Generic is called for a GenericEvent.
	Generic(ctx context.Context, evt GenericEvent, q Queue)
}

// Funcs is an EventHandler made of functions; a nil function ignores its
// event.
type Funcs struct {
	// CreateFunc is called for a CreateEvent.
	CreateFunc func(context.Context, CreateEvent, Queue)
	// UpdateFunc is called for an UpdateEvent.
	UpdateFunc func(context.Context, UpdateEvent, Queue)
	// DeleteFunc is called for a DeleteEvent.
	DeleteFunc func(context.Context, DeleteEvent, Queue)
	// GenericFunc is called for a GenericEvent.
	GenericFunc func(context.Context, GenericEvent, Queue)
}

var _ EventHandler = Funcs{}

// Create calls CreateFunc, if set.
func (f Funcs) Create(ctx context.Context, evt CreateEvent, q Queue) {
	if f.CreateFunc != nil {
		f.CreateFunc(ctx, evt, q)
	}
}

// Update calls UpdateFunc, if set.
func (f Funcs) Update(ctx context.Context, evt UpdateEvent, q Queue) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(ctx, evt, q)
	}
}

// Delete calls DeleteFunc, if set.
func (f Funcs) Delete(ctx context.Context, evt DeleteEvent, q Queue) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(ctx, evt, q)
	}
}

// Generic calls GenericFunc, if set.
func (f Funcs) Generic(ctx context.Context, evt GenericEvent, q Queue) {
	if f.GenericFunc != nil {
		f.GenericFunc(ctx, evt, q)
	}
}
