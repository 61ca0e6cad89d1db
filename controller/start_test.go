package controller

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
)

// gatedSource adds its requests at Start and reports synced when release
// is closed; WaitForSync fails like a Kind source when ctx ends first.
type gatedSource struct {
	reqs    []reconcile.Request
	release chan struct{}
	started atomic.Int32
}

func (s *gatedSource) Start(_ context.Context, q handler.Queue) error {
	s.started.Add(1)
	for _, r := range s.reqs {
		q.Add(r)
	}
	return nil
}

func (s *gatedSource) WaitForSync(ctx context.Context) error {
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("source: kind Gate did not sync: %w", context.Cause(ctx))
	}
}

func counting(calls *atomic.Int32) reconcile.Func {
	return func(context.Context, reconcile.Request) (reconcile.Result, error) {
		calls.Add(1)
		return reconcile.Result{}, nil
	}
}

func unmanaged(t *testing.T, r reconcile.Reconciler, opts Options) *Controller {
	t.Helper()
	opts.Reconciler = r
	opts.Logger = (&logBuffer{}).logger()
	c, err := NewUnmanaged("test", opts)
	require.NoError(t, err)
	return c
}

// start runs c.Start in a goroutine; the returned function cancels it and
// returns Start's error.
func start(c *Controller) (stop func() error, done <-chan error) {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Start(ctx) }()
	return func() error { cancel(); return <-errc }, errc
}

func TestStartWaitsForSourcesToSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		c := unmanaged(t, counting(&calls), Options{})
		src := &gatedSource{reqs: []reconcile.Request{webReq}, release: make(chan struct{})}
		require.NoError(t, c.Watch(src))
		stop, _ := start(c)
		synctest.Wait()
		assert.Equal(t, int32(1), src.started.Load())
		assert.Equal(t, int32(0), calls.Load(), "no reconcile before the sources synced")
		close(src.release)
		synctest.Wait()
		assert.Equal(t, int32(1), calls.Load())
		assert.NoError(t, stop())
	})
}

func TestStartSyncTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		c := unmanaged(t, counting(&calls), Options{CacheSyncTimeout: 10 * time.Second})
		require.NoError(t, c.Watch(&gatedSource{reqs: []reconcile.Request{webReq}, release: make(chan struct{})}))
		require.NoError(t, c.Watch(&gatedSource{release: closed()}))
		began := time.Now()
		err := c.Start(context.Background())
		assert.Equal(t, 10*time.Second, time.Since(began))
		assert.EqualError(t, err, `controller "test": source: kind Gate did not sync: CacheSyncTimeout 10s exceeded`)
		assert.Equal(t, int32(0), calls.Load())
	})
}

var _ source.Source = (*gatedSource)(nil)

func closed() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

func TestStartCancelledWhileSyncing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		c := unmanaged(t, counting(&calls), Options{})
		require.NoError(t, c.Watch(&gatedSource{release: make(chan struct{})}))
		stop, _ := start(c)
		time.Sleep(time.Second)
		assert.NoError(t, stop(), "a stop while syncing is not an error")
	})
}

func TestStartTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		c := unmanaged(t, counting(&calls), Options{})
		stop, _ := start(c)
		synctest.Wait()
		assert.EqualError(t, c.Start(context.Background()), `controller "test": already started`)
		assert.NoError(t, stop())
	})
}

func TestWatchWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		c := unmanaged(t, counting(&calls), Options{})
		stop, _ := start(c)
		synctest.Wait()
		require.NoError(t, c.Watch(&gatedSource{reqs: []reconcile.Request{webReq}, release: make(chan struct{})}))
		synctest.Wait()
		assert.Equal(t, int32(1), calls.Load(), "a source added while running starts at once")
		assert.NoError(t, stop())
	})
}

func TestShutdownWaitsForInFlightReconciles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var started, finished atomic.Int32
		r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			started.Add(1)
			time.Sleep(10 * time.Second) // ignores ctx, like a slow API call
			finished.Add(1)
			return reconcile.Result{}, nil
		})
		c := unmanaged(t, r, Options{MaxConcurrentReconciles: 2})
		var reqs []reconcile.Request
		for i := range 5 {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: fmt.Sprint(i)}})
		}
		require.NoError(t, c.Watch(&gatedSource{reqs: reqs, release: closed()}))
		stop, _ := start(c)
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, int32(2), started.Load())
		began := time.Now()
		assert.NoError(t, stop())
		assert.Equal(t, 9*time.Second, time.Since(began), "Start returned when the reconciles in flight did")
		assert.Equal(t, int32(2), finished.Load())
		assert.Equal(t, int32(2), started.Load(), "no reconcile started after the stop")
	})
}

func TestReconcileContextCancelledOnStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sawCancel atomic.Bool
		r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			<-ctx.Done()
			sawCancel.Store(true)
			return reconcile.Result{}, ctx.Err()
		})
		c := unmanaged(t, r, Options{})
		require.NoError(t, c.Watch(&gatedSource{reqs: []reconcile.Request{webReq}, release: closed()}))
		stop, _ := start(c)
		synctest.Wait()
		assert.NoError(t, stop())
		assert.True(t, sawCancel.Load())
	})
}

func TestOptionsValidation(t *testing.T) {
	_, err := NewUnmanaged("", Options{MaxConcurrentReconciles: -1, CacheSyncTimeout: -1, ReconcileTimeout: -1})
	assert.EqualError(t, err, `controller: name must not be empty
controller "": Options.Reconciler must not be nil
controller "": Options.MaxConcurrentReconciles -1 is negative
controller "": Options.CacheSyncTimeout -1ns is negative
controller "": Options.ReconcileTimeout -1ns is negative`)
}

func TestOptionsDefaults(t *testing.T) {
	var calls atomic.Int32
	c := unmanaged(t, counting(&calls), Options{})
	assert.Equal(t, 1, c.workers)
	assert.Equal(t, 2*time.Minute, c.cacheSyncTimeout)
	assert.True(t, c.recoverPanic)
	assert.True(t, c.NeedLeaderElection())
	assert.Equal(t, "test", c.ControllerName())
	assert.Nil(t, c.queueMetrics, "no registerer: no queue metrics")

	c = unmanaged(t, counting(&calls), Options{NeedLeaderElection: ptr(false), MaxConcurrentReconciles: 3})
	assert.False(t, c.NeedLeaderElection())
	assert.Equal(t, 3, c.workers)
}

// testManager is the smallest Manager: New only needs a logger, metrics
// and Add.
type testManager struct {
	reg       *prometheus.Registry
	log       logr.Logger
	runnables []interface{ Start(context.Context) error }
	addErr    error
}

func (m *testManager) GetClient() client.Client       { return nil }
func (m *testManager) GetCache() cache.Cache          { return nil }
func (m *testManager) GetScheme() *runtime.Scheme     { return nil }
func (m *testManager) GetRESTMapper() meta.RESTMapper { return nil }
func (m *testManager) GetLogger() logr.Logger         { return m.log }
func (m *testManager) Metrics() prometheus.Registerer { return m.reg }
func (m *testManager) Add(r interface{ Start(context.Context) error }) error {
	if m.addErr != nil {
		return m.addErr
	}
	m.runnables = append(m.runnables, r)
	return nil
}

var _ Manager = (*testManager)(nil)

func TestNewAddsToManager(t *testing.T) {
	logs := &logBuffer{}
	mgr := &testManager{reg: prometheus.NewRegistry(), log: logs.logger()}
	var calls atomic.Int32
	c, err := New("apps", mgr, Options{Reconciler: counting(&calls)})
	require.NoError(t, err)
	assert.Equal(t, []interface{ Start(context.Context) error }{c}, mgr.runnables)
	assert.Contains(t, gather(t, mgr.reg), `controller_runtime_reconcile_total{controller="apps",result="success"}`, "metrics on the manager's registry")
	c.GetLogger().Info("hi")
	assert.Contains(t, logs.String(), `"controller"="apps"`, "the manager's logger")

	// A second controller on the same registry shares the vectors.
	_, err = New("pods", mgr, Options{Reconciler: counting(&calls)})
	require.NoError(t, err)
	got := gather(t, mgr.reg)
	assert.Contains(t, got, `controller_runtime_reconcile_total{controller="pods",result="success"}`)
	assert.Contains(t, got, `controller_runtime_reconcile_total{controller="apps",result="success"}`)

	mgr.addErr = errors.New(`manager: a controller named "apps" was already added`)
	_, err = New("apps", mgr, Options{Reconciler: counting(&calls)})
	assert.EqualError(t, err, `controller "apps": add to manager: manager: a controller named "apps" was already added`)
}
