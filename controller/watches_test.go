package controller

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
)

// recording is a Reconciler that records the names it reconciles.
type recording struct {
	mu    sync.Mutex
	names []string
}

func (r *recording) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	r.names = append(r.names, req.Name)
	r.mu.Unlock()
	return reconcile.Result{}, nil
}

func (r *recording) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.names...)
}

func event(name string) handler.GenericEvent {
	return handler.GenericEvent{Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}}
}

// TestRemoveWatchWhileRunning: once RemoveWatch returns, the removed
// source adds nothing to the queue, while the other source still does.
func TestRemoveWatchWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recording{}
		c := unmanaged(t, rec, Options{})
		keepCh, dropCh := make(chan handler.GenericEvent, 1), make(chan handler.GenericEvent, 1)
		keep := source.Channel(keepCh, &handler.EnqueueRequestForObject{})
		drop := source.Channel(dropCh, &handler.EnqueueRequestForObject{})
		require.NoError(t, c.Watch(keep))
		require.NoError(t, c.Watch(drop))
		stop, _ := start(c)

		keepCh <- event("kept-1")
		dropCh <- event("dropped-1")
		synctest.Wait()
		assert.ElementsMatch(t, []string{"kept-1", "dropped-1"}, rec.seen(), "both sources feed the queue")

		require.NoError(t, c.RemoveWatch(drop))
		dropCh <- event("dropped-2") // its goroutine may still read it: the door is closed
		keepCh <- event("kept-2")
		synctest.Wait()
		assert.ElementsMatch(t, []string{"kept-1", "dropped-1", "kept-2"}, rec.seen())

		assert.ErrorIs(t, c.RemoveWatch(drop), ErrWatchNotFound, "removed twice")
		assert.NoError(t, stop())
	})
}

// TestRemoveWatchBeforeStart: a source removed before Start is never
// started, and Start does not wait for it.
func TestRemoveWatchBeforeStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		c := unmanaged(t, counting(&calls), Options{})
		removed := &gatedSource{reqs: []reconcile.Request{webReq}, release: make(chan struct{})} // never syncs
		require.NoError(t, c.Watch(removed))
		require.NoError(t, c.RemoveWatch(removed))
		stop, _ := start(c)
		synctest.Wait()
		assert.Equal(t, int32(0), removed.started.Load())
		assert.Equal(t, int32(0), calls.Load())
		assert.NoError(t, stop())
	})
}

// TestRemoveWatchWhileSyncing: Start stops waiting for a source removed
// while it syncs.
func TestRemoveWatchWhileSyncing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		c := unmanaged(t, counting(&calls), Options{})
		stuck := &gatedSource{release: make(chan struct{})} // never syncs
		other := &gatedSource{reqs: []reconcile.Request{webReq}, release: closed()}
		require.NoError(t, c.Watch(stuck))
		require.NoError(t, c.Watch(other))
		stop, done := start(c)
		synctest.Wait()
		assert.Equal(t, int32(0), calls.Load(), "waiting for the stuck source")
		require.NoError(t, c.RemoveWatch(stuck))
		synctest.Wait()
		assert.Equal(t, int32(1), calls.Load(), "the workers started")
		select {
		case err := <-done:
			t.Fatalf("Start returned early: %v", err)
		default:
		}
		assert.NoError(t, stop())
	})
}

func TestRemoveWatchUnknownSources(t *testing.T) {
	c := unmanaged(t, &recording{}, Options{})
	fn := source.Func(func(context.Context, handler.Queue) error { return nil })
	require.NoError(t, c.Watch(fn))
	for _, tt := range []struct {
		name string
		give source.Source
	}{
		{name: "not watched", give: &gatedSource{}},
		{name: "nil", give: nil},
		{name: "not comparable", give: fn},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, c.RemoveWatch(tt.give), ErrWatchNotFound)
		})
	}
}

// kindWaiter is a source whose kind is served or not, as source.WaitForCRD's.
type kindWaiter struct {
	source.Func
	kind       string
	reconciled bool
	waiting    atomic.Bool
}

func newKindWaiter(kind string, reconciled bool) *kindWaiter {
	w := &kindWaiter{kind: kind, reconciled: reconciled, Func: func(context.Context, handler.Queue) error { return nil }}
	w.waiting.Store(true)
	return w
}

func (w *kindWaiter) Kind() string        { return w.kind }
func (w *kindWaiter) Waiting() bool       { return w.waiting.Load() }
func (w *kindWaiter) DropsRequests() bool { return w.reconciled && w.waiting.Load() }

var (
	_ waitingSource  = (*kindWaiter)(nil)
	_ droppingSource = (*kindWaiter)(nil)
)

// TestReconciledKindNotServedDropsRequests: while the reconciled kind is
// not served, every Request taken from the queue is dropped (and
// forgotten), not reconciled; once served, Requests are reconciled again.
// A waiting kind that is not the reconciled one drops nothing.
func TestReconciledKindNotServedDropsRequests(t *testing.T) {
	tests := []struct {
		name       string
		reconciled bool
		want       []string
	}{
		{name: "reconciled kind", reconciled: true, want: []string{"after"}},
		{name: "other kind", reconciled: false, want: []string{"web", "backoff", "after"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recording{}
			c := unmanaged(t, rec, Options{})
			src := newKindWaiter("Widget.example.com", tt.reconciled)
			require.NoError(t, c.Watch(src))
			c.queue = c.newQueue()
			defer c.queue.ShutDown()

			backoff := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "backoff"}}
			c.queue.AddRateLimited(backoff) // a retry, with a history to forget
			c.queue.Add(webReq)
			require.Equal(t, 1, c.queue.NumRequeues(backoff))
			for range 2 {
				require.True(t, c.processNextWorkItem(t.Context()))
			}
			if tt.reconciled {
				assert.Equal(t, 0, c.queue.Len())
				assert.Equal(t, 0, c.queue.NumRequeues(backoff), "dropped Requests are forgotten")
			}
			src.waiting.Store(false)
			c.queue.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "after"}})
			require.True(t, c.processNextWorkItem(t.Context()))
			assert.ElementsMatch(t, tt.want, rec.seen())
		})
	}
}

// TestWaitingKindsAndMetric: WaitingKinds and kubeloop_source_waiting say
// which kinds wait, while the controller runs.
func TestWaitingKindsAndMetric(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		c := unmanaged(t, &recording{}, Options{Metrics: reg})
		other := unmanaged(t, &recording{}, Options{Metrics: reg}) // shares the collector; never runs
		widgets, gadgets := newKindWaiter("Widget.example.com", true), newKindWaiter("Gadget.example.com", false)
		require.NoError(t, c.Watch(widgets))
		require.NoError(t, c.Watch(gadgets))
		require.NoError(t, other.Watch(newKindWaiter("Other.example.com", false)))
		require.NoError(t, c.Watch(&gatedSource{release: closed()})) // not a waiting kind

		assert.Equal(t, []string{"Gadget.example.com", "Widget.example.com"}, c.WaitingKinds(), "before Start every such source waits")
		assert.NotContains(t, gather(t, reg), `kubeloop_source_waiting{controller="test",kind="Widget.example.com"}`, "reported while running only")

		stop, _ := start(c)
		synctest.Wait()
		got := gather(t, reg)
		assert.Equal(t, 1.0, got[`kubeloop_source_waiting{controller="test",kind="Widget.example.com"}`])
		assert.Equal(t, 1.0, got[`kubeloop_source_waiting{controller="test",kind="Gadget.example.com"}`])
		assert.NotContains(t, got, `kubeloop_source_waiting{controller="test",kind="Other.example.com"}`, "the other controller does not run")

		widgets.waiting.Store(false)
		assert.Equal(t, []string{"Gadget.example.com"}, c.WaitingKinds())
		assert.Equal(t, 0.0, gather(t, reg)[`kubeloop_source_waiting{controller="test",kind="Widget.example.com"}`])

		require.NoError(t, c.RemoveWatch(gadgets))
		assert.Empty(t, c.WaitingKinds())
		assert.NotContains(t, gather(t, reg), `kubeloop_source_waiting{controller="test",kind="Gadget.example.com"}`, "a removed watch is not reported")
		assert.NoError(t, stop())
	})
}
