package controller

import (
	"context"
	"sync"
	"time"

	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/trace"
	"github.com/kubeloop/kubeloop/workqueue"
)

// Tracing (Options.Tracer; see package trace). Without a Tracer none of
// this runs: the worker and the sources each check one nil field.
//
// With one, each watch's door to the queue is a tracedDoor, a
// source.EventQueue: Kind and Channel sources hand their handler, for
// each event, an eventDoor that records the event in the controller's
// linkTable under every Request the handler adds, before adding it. The
// worker takes a Request's entry when it takes the Request from the queue
// and starts the reconcile's span with those events as links. The queue
// collapses the adds of one Request; the table collapses their events the
// same way, bounded by trace.MaxLinks.

// TracerProvider is implemented by a Manager that holds a Tracer for its
// controllers (kubeloop's manager.Manager, from its Options.Tracer). New
// and controller/builder give it to a controller whose Options.Tracer is
// nil.
type TracerProvider interface {
	// GetTracer returns the manager's Tracer; nil means tracing is off.
	GetTracer() trace.Tracer
}

// eventLinks are the events recorded for one queued Request.
type eventLinks struct {
	events  []trace.Event // the first MaxLinks-1 and the latest
	dropped int
}

// add records ev: while there is room it is appended; then it replaces
// the last (latest) one, which is counted as dropped.
func (l *eventLinks) add(ev trace.Event) {
	if len(l.events) < trace.MaxLinks {
		l.events = append(l.events, ev)
		return
	}
	l.events[len(l.events)-1] = ev
	l.dropped++
}

// linkTable holds the events of the Requests waiting in the queue of a
// traced controller.
type linkTable struct {
	mu sync.Mutex
	m  map[reconcile.Request]*eventLinks
}

func newLinkTable() *linkTable {
	return &linkTable{m: map[reconcile.Request]*eventLinks{}}
}

// add records ev for req.
func (t *linkTable) add(req reconcile.Request, ev trace.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.m[req]
	if l == nil {
		l = &eventLinks{}
		t.m[req] = l
	}
	l.add(ev)
}

// take returns and forgets the events of req; nil on a nil table.
func (t *linkTable) take(req reconcile.Request) *eventLinks {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.m[req]
	delete(t.m, req)
	return l
}

// reset forgets every entry: a new run's queue starts empty. A nil table
// does nothing.
func (t *linkTable) reset() {
	if t == nil {
		return
	}
	t.mu.Lock()
	clear(t.m)
	t.mu.Unlock()
}

// len returns the number of Requests with events waiting.
func (t *linkTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// tracedDoor is the door of a watch of a traced controller: a
// source.EventQueue.
type tracedDoor struct {
	*watchQueue
	tracer trace.Tracer
	table  *linkTable
}

var _ source.EventQueue = (*tracedDoor)(nil)

// traceDoor returns door as the queue to give a source: door itself when
// the controller is not traced.
func (c *Controller) traceDoor(door *watchQueue) handler.Queue {
	if c.tracer == nil {
		return door
	}
	return &tracedDoor{watchQueue: door, tracer: c.tracer, table: c.links}
}

// ForEvent returns the queue through which the handler adds the Requests
// of ev.
func (d *tracedDoor) ForEvent(ev trace.Event) handler.Queue {
	return &eventDoor{watchQueue: d.watchQueue, d: d, ev: ev}
}

// eventDoor adds through a watch's door, linking every Request added to
// its event. The Tracer is told of the event at the first add.
type eventDoor struct {
	*watchQueue
	d    *tracedDoor
	ev   trace.Event
	once sync.Once
}

var _ handler.TypedPriorityQueue[reconcile.Request] = (*eventDoor)(nil)

// link records the event for req as the door will add it (with the
// watch's cluster).
func (e *eventDoor) link(req reconcile.Request) {
	e.once.Do(func() { e.ev.Link = e.d.tracer.Event(e.ev) })
	if e.cluster != "" && req.Cluster == "" {
		req.Cluster = e.cluster
	}
	e.d.table.add(req, e.ev)
}

// Add links req to the event and adds it.
func (e *eventDoor) Add(req reconcile.Request) {
	e.link(req)
	e.watchQueue.Add(req)
}

// AddAfter links req to the event and adds it after d.
func (e *eventDoor) AddAfter(req reconcile.Request, d time.Duration) {
	e.link(req)
	e.watchQueue.AddAfter(req, d)
}

// AddRateLimited links req to the event and adds it through the rate
// limiter.
func (e *eventDoor) AddRateLimited(req reconcile.Request) {
	e.link(req)
	e.watchQueue.AddRateLimited(req)
}

// AddWithOpts links reqs to the event and adds them.
func (e *eventDoor) AddWithOpts(opts workqueue.AddOpts, reqs ...reconcile.Request) {
	for _, r := range reqs {
		e.link(r)
	}
	e.watchQueue.AddWithOpts(opts, reqs...)
}

// takeLinks returns and forgets the events recorded for req; nil when the
// controller is not traced.
func (c *Controller) takeLinks(req reconcile.Request) *eventLinks {
	return c.links.take(req)
}

// startReconcileSpan starts the span of a reconcile of req whose context
// is ctx, linked to l's events. The context returned holds the Tracer and
// the span.
func (c *Controller) startReconcileSpan(ctx context.Context, req reconcile.Request, l *eventLinks) (context.Context, trace.Span) {
	r := trace.Reconcile{
		Controller: c.name,
		Cluster:    req.Cluster,
		Namespace:  req.Namespace,
		Name:       req.Name,
		ID:         string(ReconcileIDFromContext(ctx)),
		Requeues:   c.queue.NumRequeues(req),
	}
	if l != nil {
		r.Links, r.DroppedLinks = l.events, l.dropped
	}
	return c.tracer.StartReconcile(trace.NewContext(ctx, c.tracer), r)
}

// endReconcileSpan ends a reconcile's span with its outcome.
func endReconcileSpan(span trace.Span, res reconcile.Result, err error) {
	span.End(trace.Outcome{Err: err, Requeue: res.Requeue, RequeueAfter: res.RequeueAfter}) //nolint:staticcheck // Requeue is reported until it is removed
}
