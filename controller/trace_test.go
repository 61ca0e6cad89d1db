package controller

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/trace"
	"github.com/kubeloop/kubeloop/trace/tracetest"
)

// tracedDoorOf returns the queue a traced c hands a watch's source, as
// startWatchLocked does, as the source sees it.
func tracedDoorOf(t *testing.T, c *Controller) source.EventQueue {
	t.Helper()
	q, ok := c.traceDoor(&watchQueue{Queue: c.queue, q: c.queue}).(source.EventQueue)
	require.True(t, ok, "a traced controller's door is an EventQueue")
	return q
}

func updateEvent(rv int) trace.Event {
	return trace.Event{Type: trace.EventUpdate, Kind: "ConfigMap", Namespace: webReq.Namespace, Name: webReq.Name,
		ResourceVersion: strconv.Itoa(rv), Received: time.Unix(int64(rv), 0)}
}

func TestTracedReconcileLinksItsEvents(t *testing.T) {
	rec := &tracetest.Recorder{}
	var inside context.Context
	c, _ := newTestController(t, reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		inside = ctx
		return reconcile.Result{}, nil
	}), Options{Tracer: rec})
	door := tracedDoorOf(t, c)
	for rv := 1; rv <= 3; rv++ {
		door.ForEvent(updateEvent(rv)).Add(webReq)
	}
	require.Equal(t, 1, c.queue.Len(), "the queue collapses the three adds")
	require.True(t, c.processNextWorkItem(t.Context()))

	spans := rec.Reconciles()
	require.Len(t, spans, 1)
	r := spans[0].Reconcile
	assert.Equal(t, "test", r.Controller)
	assert.Equal(t, webReq.Namespace, r.Namespace)
	assert.Equal(t, webReq.Name, r.Name)
	assert.Equal(t, string(ReconcileIDFromContext(inside)), r.ID, "the span carries the logs' reconcileID")
	require.Len(t, r.Links, 3)
	for i, l := range r.Links {
		assert.Equal(t, strconv.Itoa(i+1), l.ResourceVersion)
		assert.Equal(t, tracetest.EventLink(i), l.Link, "each link carries what Tracer.Event returned for it")
	}
	assert.Zero(t, r.DroppedLinks)
	assert.Len(t, rec.Events(), 3, "Tracer.Event is called once per event")
	o, ended := spans[0].Ended()
	assert.True(t, ended)
	assert.NoError(t, o.Err)
	assert.Same(t, rec, trace.FromContext(inside), "the Reconciler's context holds the Tracer for the client")
	assert.Zero(t, c.links.len(), "the worker took the Request's events")
}

func TestTracedLinksAreBounded(t *testing.T) {
	const events = 20
	rec := &tracetest.Recorder{}
	c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{}, nil
	}), Options{Tracer: rec})
	door := tracedDoorOf(t, c)
	for rv := 1; rv <= events; rv++ {
		door.ForEvent(updateEvent(rv)).Add(webReq)
	}
	require.True(t, c.processNextWorkItem(t.Context()))

	spans := rec.Reconciles()
	require.Len(t, spans, 1)
	r := spans[0].Reconcile
	var rvs []string
	for _, l := range r.Links {
		rvs = append(rvs, l.ResourceVersion)
	}
	assert.Equal(t, []string{"1", "2", "3", "4", "5", "6", "7", "20"}, rvs,
		"the first MaxLinks-1 events and the latest, whose version the reconcile reads")
	assert.Equal(t, events-trace.MaxLinks, r.DroppedLinks)
}

func TestTracedEventsDuringAReconcileGoToTheNext(t *testing.T) {
	rec := &tracetest.Recorder{}
	var door source.EventQueue
	calls := 0
	c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		calls++
		if calls == 1 {
			door.ForEvent(updateEvent(2)).Add(webReq) // arrives while the first reconcile runs
		}
		return reconcile.Result{}, nil
	}), Options{Tracer: rec})
	door = tracedDoorOf(t, c)
	door.ForEvent(updateEvent(1)).Add(webReq)
	require.True(t, c.processNextWorkItem(t.Context()))
	require.True(t, c.processNextWorkItem(t.Context()))

	spans := rec.Reconciles()
	require.Len(t, spans, 2)
	require.Len(t, spans[0].Reconcile.Links, 1)
	assert.Equal(t, "1", spans[0].Reconcile.Links[0].ResourceVersion)
	require.Len(t, spans[1].Reconcile.Links, 1)
	assert.Equal(t, "2", spans[1].Reconcile.Links[0].ResourceVersion)
}

func TestTracedRequeueHasNoLinksAndEndsWithTheOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &tracetest.Recorder{}
		boom := errors.New("boom")
		calls := 0
		c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			calls++
			switch calls {
			case 1:
				return reconcile.Result{}, boom
			case 2:
				return reconcile.Result{RequeueAfter: time.Minute}, nil
			}
			return reconcile.Result{}, nil
		}), Options{Tracer: rec})
		tracedDoorOf(t, c).ForEvent(updateEvent(1)).Add(webReq)
		for range 3 {
			require.True(t, c.processNextWorkItem(t.Context())) // the second and third wait for their delays
		}

		spans := rec.Reconciles()
		require.Len(t, spans, 3)
		assert.Len(t, spans[0].Reconcile.Links, 1)
		assert.Empty(t, spans[1].Reconcile.Links, "a retry after an error links to nothing")
		assert.Empty(t, spans[2].Reconcile.Links, "nor does a RequeueAfter")
		assert.Equal(t, []int{0, 1, 0}, []int{spans[0].Reconcile.Requeues, spans[1].Reconcile.Requeues, spans[2].Reconcile.Requeues})
		o, _ := spans[0].Ended()
		assert.ErrorIs(t, o.Err, boom)
		o, _ = spans[1].Ended()
		assert.Equal(t, time.Minute, o.RequeueAfter)
		assert.NoError(t, o.Err)
	})
}

func TestTracedDoorStampsTheWatchCluster(t *testing.T) {
	rec := &tracetest.Recorder{}
	var got reconcile.Request
	c, _ := newTestController(t, reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		got = req
		return reconcile.Result{}, nil
	}), Options{Tracer: rec})
	c.live.Store("east", &engagement{}) // engaged, as EngageCluster leaves it (clusters.go)
	door := c.traceDoor(&watchQueue{Queue: c.queue, q: c.queue, cluster: "east"}).(source.EventQueue)
	door.ForEvent(updateEvent(1)).Add(webReq)
	require.True(t, c.processNextWorkItem(t.Context()))
	assert.Equal(t, "east", got.Cluster)
	spans := rec.Reconciles()
	require.Len(t, spans, 1)
	assert.Equal(t, "east", spans[0].Reconcile.Cluster)
	assert.Len(t, spans[0].Reconcile.Links, 1, "the event is found under the stamped Request")
}

func TestTracedDroppedRequestLeavesNoEvents(t *testing.T) {
	rec := &tracetest.Recorder{}
	c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{}, nil
	}), Options{Tracer: rec})
	door := c.traceDoor(&watchQueue{Queue: c.queue, q: c.queue, cluster: "gone"}).(source.EventQueue)
	door.ForEvent(updateEvent(1)).Add(webReq)
	require.Equal(t, 1, c.links.len())
	require.True(t, c.processNextWorkItem(t.Context()), "a Request of a cluster not engaged is dropped")
	assert.Empty(t, rec.Reconciles())
	assert.Zero(t, c.links.len(), "its events went with it")
}

func TestUntracedControllerHasNoHook(t *testing.T) {
	c, _ := newTestController(t, reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		if trace.FromContext(ctx) != nil {
			return reconcile.Result{}, errors.New("a Tracer in an untraced reconcile")
		}
		return reconcile.Result{}, nil
	}), Options{})
	door := &watchQueue{Queue: c.queue, q: c.queue}
	_, isEventQueue := c.traceDoor(door).(source.EventQueue)
	assert.False(t, isEventQueue, "an untraced controller's sources see no EventQueue")
	assert.Nil(t, c.links, "no side table")
	c.queue.Add(webReq)
	require.True(t, c.processNextWorkItem(t.Context()))
	assert.Equal(t, 1.0, value(t, c.metrics.ReconcileSuccess))
}

// TestUntracedReconcileAllocs guards the hook's cost with tracing off: a
// reconcile of the worker allocates only its context, as before tracing.
func TestUntracedReconcileAllocs(t *testing.T) {
	r := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	c, err := NewUnmanaged("allocs", Options{Reconciler: r, Logger: logr.New(discardSink{}), Metrics: prometheus.NewRegistry()})
	require.NoError(t, err)
	c.queue = c.newQueue()
	defer c.queue.ShutDown()
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() {
		c.queue.Add(webReq)
		c.processNextWorkItem(ctx)
	})
	assert.Equal(t, 1.0, allocs, "the reconcile context is the only allocation")
}

// BenchmarkProcessNextWorkItemTraced is BenchmarkProcessNextWorkItem with
// a Tracer that records nothing, the Request added through a traced door:
// the cost of the hook itself when on.
func BenchmarkProcessNextWorkItemTraced(b *testing.B) {
	r := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	c, err := NewUnmanaged("bench", Options{Reconciler: r, Logger: logr.New(discardSink{}), Metrics: prometheus.NewRegistry(), Tracer: nopTracer{}})
	if err != nil {
		b.Fatal(err)
	}
	c.queue = c.newQueue()
	defer c.queue.ShutDown()
	door := c.traceDoor(&watchQueue{Queue: c.queue, q: c.queue}).(source.EventQueue)
	ctx := context.Background()
	ev := updateEvent(1)
	b.ReportAllocs()
	for b.Loop() {
		door.ForEvent(ev).Add(webReq)
		c.processNextWorkItem(ctx)
	}
}

// nopTracer is a Tracer that does nothing.
type nopTracer struct{}

func (nopTracer) Event(trace.Event) any { return nil }
func (nopTracer) StartReconcile(ctx context.Context, _ trace.Reconcile) (context.Context, trace.Span) {
	return ctx, nopSpan{}
}
func (nopTracer) StartCall(ctx context.Context, _ trace.Call) (context.Context, trace.Span) {
	return ctx, nopSpan{}
}

type nopSpan struct{}

func (nopSpan) End(trace.Outcome) {}
