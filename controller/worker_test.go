package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/reconcile"
)

var webReq = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "web"}}

// logBuffer collects log lines; safe for concurrent use.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.lines = append(b.lines, args)
	}, funcr.Options{Verbosity: 1})
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// newTestController returns an unmanaged controller around r with its
// queue created, as Start would, and the registry of its metrics.
func newTestController(t *testing.T, r reconcile.Reconciler, opts Options) (*Controller, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	opts.Reconciler = r
	opts.Metrics = reg
	if opts.Logger.GetSink() == nil {
		opts.Logger = (&logBuffer{}).logger()
	}
	c, err := NewUnmanaged("test", opts)
	require.NoError(t, err)
	c.queue = c.newQueue()
	t.Cleanup(c.queue.ShutDown)
	return c, reg
}

// results returns controller_runtime_reconcile_total by result.
func results(t *testing.T, c *Controller) map[string]float64 {
	return map[string]float64{
		"success":       value(t, c.metrics.ReconcileSuccess),
		"error":         value(t, c.metrics.ReconcileError),
		"requeue_after": value(t, c.metrics.ReconcileRequeueAfter),
		"requeue":       value(t, c.metrics.ReconcileRequeue),
	}
}

func TestProcessSuccessForgets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			calls++
			if calls <= 2 {
				return reconcile.Result{}, errors.New("not yet")
			}
			return reconcile.Result{}, nil
		}), Options{})
		c.queue.Add(webReq)
		for want := 1; want <= 2; want++ {
			require.True(t, c.processNextWorkItem(t.Context()))
			assert.Equal(t, want, c.queue.NumRequeues(webReq))
		}
		require.True(t, c.processNextWorkItem(t.Context()))
		assert.Equal(t, 0, c.queue.NumRequeues(webReq), "success resets the backoff")
		assert.Equal(t, 3, calls)
		assert.Equal(t, map[string]float64{"success": 1, "error": 2, "requeue_after": 0, "requeue": 0}, results(t, c))
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Equal(t, 0, c.queue.Len(), "nothing re-queued after success")
	})
}

func TestProcessErrorBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts []time.Time
		c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			attempts = append(attempts, time.Now())
			return reconcile.Result{}, errors.New("boom")
		}), Options{})
		c.queue.Add(webReq)
		for i := range 5 {
			require.True(t, c.processNextWorkItem(t.Context())) // blocks until the backoff has passed
			assert.Equal(t, i+1, c.queue.NumRequeues(webReq))
		}
		var delays []time.Duration
		for i := 1; i < len(attempts); i++ {
			delays = append(delays, attempts[i].Sub(attempts[i-1]))
		}
		assert.Equal(t, []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}, delays)
		assert.Equal(t, 5.0, value(t, c.metrics.Errors))
	})
}

func TestProcessTerminalErrorNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, fmt.Errorf("app default/web: %w", reconcile.TerminalError(errors.New("spec.port out of range")))
		}), Options{})
		c.queue.Add(webReq)
		require.True(t, c.processNextWorkItem(t.Context()))
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Equal(t, 0, c.queue.Len())
		assert.Equal(t, 0, c.queue.NumRequeues(webReq))
		assert.Equal(t, 1.0, value(t, c.metrics.TerminalErrors))
		assert.Equal(t, 1.0, value(t, c.metrics.Errors))
	})
}

func TestProcessRequeueAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{RequeueAfter: time.Minute}, nil
		}), Options{})
		c.queue.AddRateLimited(webReq) // a backoff to be reset
		require.True(t, c.processNextWorkItem(t.Context()))
		assert.Equal(t, 0, c.queue.NumRequeues(webReq), "RequeueAfter resets the backoff")
		time.Sleep(time.Minute - time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 0, c.queue.Len(), "not before the delay")
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 1, c.queue.Len(), "ready after the delay")
		assert.Equal(t, 1.0, results(t, c)["requeue_after"])
	})
}

func TestProcessErrorWinsOverResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &logBuffer{}
		c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{RequeueAfter: time.Hour}, errors.New("boom")
		}), Options{Logger: logs.logger()})
		c.queue.Add(webReq)
		start := time.Now()
		require.True(t, c.processNextWorkItem(t.Context()))
		require.True(t, c.processNextWorkItem(t.Context()))
		assert.Equal(t, 5*time.Millisecond, time.Since(start), "re-queued by the rate limiter, not by RequeueAfter")
		assert.Contains(t, logs.String(), "the requeue fields are ignored")
	})
}

func TestProcessPanicRecovered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &logBuffer{}
		c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			var m map[string]int
			m["x"] = 1 // nil map write
			return reconcile.Result{}, nil
		}), Options{Logger: logs.logger()})
		c.queue.Add(webReq)
		require.True(t, c.processNextWorkItem(t.Context()), "the worker survives")
		assert.Equal(t, 1.0, value(t, c.metrics.Panics))
		assert.Equal(t, 1.0, value(t, c.metrics.Errors))
		assert.Equal(t, 1, c.queue.NumRequeues(webReq), "retried with backoff")
		assert.Equal(t, 0.0, value(t, c.metrics.ActiveWorkers))
		assert.Contains(t, logs.String(), "panic: assignment to entry in nil map [recovered]")
	})
}

func TestProcessPanicNotRecovered(t *testing.T) {
	c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		panic("boom")
	}), Options{RecoverPanic: ptr(false)})
	c.queue.Add(webReq)
	assert.PanicsWithValue(t, "boom", func() { c.processNextWorkItem(t.Context()) })
	assert.Equal(t, 0.0, value(t, c.metrics.ActiveWorkers))
	assert.Equal(t, 0.0, value(t, c.metrics.Panics))
}

func TestProcessReconcileTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cause error
		var took time.Duration
		c, _ := newTestController(t, reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
			start := time.Now()
			<-ctx.Done()
			took = time.Since(start)
			cause = context.Cause(ctx)
			return reconcile.Result{}, ctx.Err()
		}), Options{ReconcileTimeout: 30 * time.Second})
		c.queue.Add(webReq)
		require.True(t, c.processNextWorkItem(t.Context()))
		assert.Equal(t, 30*time.Second, took)
		assert.ErrorIs(t, cause, errReconcileTimeout)
		assert.Equal(t, 1.0, value(t, c.metrics.Timeouts))
		assert.Equal(t, 1, c.queue.NumRequeues(webReq), "a timeout is an error: retried")
	})
}

func TestProcessLoggerAndReconcileID(t *testing.T) {
	logs := &logBuffer{}
	var ids []types.UID
	c, _ := newTestController(t, reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		ids = append(ids, ReconcileIDFromContext(ctx))
		logr.FromContextOrDiscard(ctx).Info("hello")
		return reconcile.Result{}, nil
	}), Options{Logger: logs.logger()})
	for range 2 {
		c.queue.Add(webReq)
		require.True(t, c.processNextWorkItem(t.Context()))
	}
	require.Len(t, ids, 2)
	assert.NotEqual(t, ids[0], ids[1])
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, string(ids[0]))
	want := fmt.Sprintf(`"msg"="hello" "controller"="test" "object"={"name"="web" "namespace"="default"} "namespace"="default" "name"="web" "reconcileID"=%q`, ids[0])
	assert.Contains(t, logs.String(), want)
	assert.Equal(t, types.UID(""), ReconcileIDFromContext(t.Context()))
}

func TestProcessStopsWhenContextEnds(t *testing.T) {
	called := false
	c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		called = true
		return reconcile.Result{}, nil
	}), Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	c.queue.Add(webReq)
	assert.False(t, c.processNextWorkItem(ctx))
	assert.False(t, called, "no reconcile starts after the context ended")

	c.queue.ShutDown()
	assert.False(t, c.processNextWorkItem(t.Context()), "shut down queue")
}

func TestMetricsExposition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		outcomes := map[string]func() (reconcile.Result, error){
			"ok":       func() (reconcile.Result, error) { return reconcile.Result{}, nil },
			"later":    func() (reconcile.Result, error) { return reconcile.Result{RequeueAfter: time.Hour}, nil },
			"fail":     func() (reconcile.Result, error) { return reconcile.Result{}, errors.New("boom") },
			"terminal": func() (reconcile.Result, error) { return reconcile.Result{}, reconcile.TerminalError(nil) },
		}
		c, reg := newTestController(t, reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
			return outcomes[req.Name]()
		}), Options{MaxConcurrentReconciles: 3})
		for _, name := range []string{"ok", "later", "fail", "terminal"} {
			c.queue.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: name}})
			require.True(t, c.processNextWorkItem(t.Context()))
		}
		got := gather(t, reg)
		want := map[string]float64{
			`controller_runtime_reconcile_total{controller="test",result="error"}`:         2,
			`controller_runtime_reconcile_total{controller="test",result="requeue"}`:       0,
			`controller_runtime_reconcile_total{controller="test",result="requeue_after"}`: 1,
			`controller_runtime_reconcile_total{controller="test",result="success"}`:       1,
			`controller_runtime_reconcile_errors_total{controller="test"}`:                 2,
			`controller_runtime_terminal_reconcile_errors_total{controller="test"}`:        1,
			`controller_runtime_reconcile_panics_total{controller="test"}`:                 0,
			`controller_runtime_reconcile_timeouts_total{controller="test"}`:               0,
			`controller_runtime_reconcile_time_seconds{controller="test"}`:                 4,
			`controller_runtime_active_workers{controller="test"}`:                         0,
			`controller_runtime_max_concurrent_reconciles{controller="test"}`:              0, // set by Start
			`workqueue_adds_total{controller="test",name="test"}`:                          4,
			`workqueue_retries_total{controller="test",name="test"}`:                       2, // AddRateLimited and AddAfter, as in client-go
			`workqueue_queue_duration_seconds{controller="test",name="test"}`:              4,
			`workqueue_work_duration_seconds{controller="test",name="test"}`:               4,
		}
		for series, v := range want {
			assert.Contains(t, got, series)
			assert.Equal(t, v, got[series], series)
		}
		for _, series := range []string{"workqueue_depth", "workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds"} {
			assert.Contains(t, got, series+`{controller="test",name="test"}`)
		}
		c.queue.ShutDown()
	})
}

func TestProcessConflictRetriedQuietly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &logBuffer{}
		calls := 0
		c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			calls++
			if calls == 1 {
				return reconcile.Result{}, fmt.Errorf("update: %w", apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "web", errors.New("the object has been modified")))
			}
			return reconcile.Result{}, nil
		}), Options{Logger: logs.logger()})
		c.queue.Add(webReq)
		require.True(t, c.processNextWorkItem(t.Context()))
		assert.Equal(t, 1, c.queue.NumRequeues(webReq), "a conflict is retried with backoff")
		require.True(t, c.processNextWorkItem(t.Context()))
		assert.Equal(t, 2, calls)
		out := logs.String()
		assert.Contains(t, out, "conflict", "the conflict is logged at V(1)")
		assert.NotContains(t, out, "Reconciler error")
	})
}
