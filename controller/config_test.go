package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/config"
	"github.com/kubeloop/kubeloop/reconcile"
)

// configManager is a testManager with defaults for its controllers.
type configManager struct {
	*testManager
	cfg config.Controller
}

func (m configManager) GetControllerOptions() config.Controller { return m.cfg }

var _ ConfigProvider = configManager{}

func TestDefaultFromConfig(t *testing.T) {
	cfgLogs := &logBuffer{}
	cfg := config.Controller{
		SkipNameValidation:      ptr(true),
		MaxConcurrentReconciles: 4,
		CacheSyncTimeout:        time.Minute,
		RecoverPanic:            ptr(false),
		NeedLeaderElection:      ptr(false),
		EnableWarmup:            ptr(true),
		UsePriorityQueue:        ptr(false),
		Logger:                  cfgLogs.logger(),
		ReconciliationTimeout:   time.Second,
	}
	tests := []struct {
		name string
		give Options
		want Options
	}{
		{
			name: "zero options take every default",
			want: Options{SkipNameValidation: ptr(true), MaxConcurrentReconciles: 4, CacheSyncTimeout: time.Minute,
				RecoverPanic: ptr(false), NeedLeaderElection: ptr(false), Logger: cfg.Logger, ReconcileTimeout: time.Second},
		},
		{
			name: "set options win",
			give: Options{SkipNameValidation: ptr(false), MaxConcurrentReconciles: 2, CacheSyncTimeout: time.Hour,
				RecoverPanic: ptr(true), NeedLeaderElection: ptr(true), ReconcileTimeout: time.Minute},
			want: Options{SkipNameValidation: ptr(false), MaxConcurrentReconciles: 2, CacheSyncTimeout: time.Hour,
				RecoverPanic: ptr(true), NeedLeaderElection: ptr(true), Logger: cfg.Logger, ReconcileTimeout: time.Minute},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.give
			got.DefaultFromConfig(cfg)
			assert.Equal(t, tt.want, got)
		})
	}
	var zero Options
	zero.DefaultFromConfig(config.Controller{})
	assert.Equal(t, Options{}, zero, "the zero config changes nothing")
}

func TestNewTakesManagerDefaults(t *testing.T) {
	mgrLogs, cfgLogs := &logBuffer{}, &logBuffer{}
	mgr := configManager{
		testManager: &testManager{reg: prometheus.NewRegistry(), log: mgrLogs.logger()},
		cfg: config.Controller{MaxConcurrentReconciles: 3, CacheSyncTimeout: time.Minute, RecoverPanic: ptr(false),
			NeedLeaderElection: ptr(false), SkipNameValidation: ptr(true), ReconciliationTimeout: time.Second, Logger: cfgLogs.logger()},
	}
	noop := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	c, err := New("defaults", mgr, Options{Reconciler: noop})
	require.NoError(t, err)
	assert.Equal(t, 3, c.workers)
	assert.Equal(t, time.Minute, c.cacheSyncTimeout)
	assert.Equal(t, time.Second, c.reconcileTimeout)
	assert.False(t, c.recoverPanic)
	assert.False(t, c.NeedLeaderElection())
	assert.True(t, c.SkipNameValidation())
	c.GetLogger().Info("hi")
	assert.Contains(t, cfgLogs.String(), `"controller"="defaults"`, "the config's logger")
	assert.Empty(t, mgrLogs.String())

	own, err := New("own", mgr, Options{Reconciler: noop, MaxConcurrentReconciles: 1, SkipNameValidation: ptr(false), RecoverPanic: ptr(true)})
	require.NoError(t, err)
	assert.Equal(t, 1, own.workers, "the controller's options win")
	assert.False(t, own.SkipNameValidation())
	assert.True(t, own.recoverPanic)

	// NewUnmanaged knows no manager: no defaults.
	u, err := NewUnmanaged("unmanaged", Options{Reconciler: noop})
	require.NoError(t, err)
	assert.True(t, u.recoverPanic)
	assert.False(t, u.SkipNameValidation())
}

func TestNewTyped(t *testing.T) {
	mgr := &testManager{reg: prometheus.NewRegistry(), log: (&logBuffer{}).logger()}
	var got []reconcile.Request
	r := reconcile.TypedFunc[reconcile.Request](func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		got = append(got, req)
		if req == webReq {
			panic("boom")
		}
		return reconcile.Result{RequeueAfter: time.Second}, nil
	})
	c, err := NewTyped("typed", mgr, TypedOptions[reconcile.Request]{Reconciler: r})
	require.NoError(t, err)
	assert.Equal(t, []interface{ Start(context.Context) error }{c}, mgr.runnables)
	res, err := c.Reconcile(t.Context(), otherReq)
	assert.NoError(t, err)
	assert.Equal(t, time.Second, res.RequeueAfter)
	_, err = c.Reconcile(t.Context(), webReq)
	assert.EqualError(t, err, "panic: boom [recovered]", "Reconcile recovers panics as a worker does")
	assert.Equal(t, []reconcile.Request{otherReq, webReq}, got)

	type other struct{ name string }
	_, err = NewTyped("other", mgr, TypedOptions[other]{})
	assert.True(t, errors.Is(err, ErrUnsupportedRequest))
	assert.EqualError(t, err, `controller "other": request type controller.other is not supported: `+ErrUnsupportedRequest.Error())
}
