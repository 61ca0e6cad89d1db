package builder_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/config"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/reconcile"
)

// configManager is a testManager with defaults for its controllers, as
// manager.Options.Controller gives them.
type configManager struct {
	*testManager
	cfg config.Controller
}

var _ controller.ConfigProvider = configManager{}

func (m configManager) GetControllerOptions() config.Controller { return m.cfg }

// TestManagerControllerDefaults checks that a builder-built controller
// takes the manager's config.Controller for the options it leaves zero:
// GroupKindConcurrency by For's kind before MaxConcurrentReconciles, and
// that WithOptions wins.
func TestManagerControllerDefaults(t *testing.T) {
	live, ns := newNamespace(t)
	base := newManager(t, cfg, ns)
	mgr := configManager{testManager: base, cfg: config.Controller{
		MaxConcurrentReconciles: 2,
		GroupKindConcurrency:    map[string]int{"ConfigMap": 3, "Deployment.apps": 0},
		NeedLeaderElection:      ptr.To(false),
		ReconciliationTimeout:   time.Hour,
	}}
	deadlines := make(chan time.Duration, 1)
	noop := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if d, ok := ctx.Deadline(); ok && req.Name == "probe" {
			select {
			case deadlines <- time.Until(d):
			default:
			}
		}
		return reconcile.Result{}, nil
	})

	byKind, err := builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Build(noop)
	require.NoError(t, err)
	assert.False(t, byKind.NeedLeaderElection(), "NeedLeaderElection from the manager")
	_, err = builder.ControllerManagedBy(mgr).For(&appsv1.Deployment{}).Build(noop) // a count of 0 is no count
	require.NoError(t, err)
	_, err = builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("own").
		WithOptions(controller.Options{MaxConcurrentReconciles: 5, NeedLeaderElection: ptr.To(true)}).Build(noop)
	require.NoError(t, err)
	assert.False(t, byKind.SkipNameValidation())

	stop, _ := mgr.start(t)
	require.NoError(t, live.Create(t.Context(), configMap(ns, "probe")))
	select {
	case d := <-deadlines:
		assert.InDelta(t, float64(time.Hour), float64(d), float64(time.Minute), "ReconciliationTimeout is the reconcile's deadline")
	case <-time.After(wait):
		t.Fatal("no reconcile of probe")
	}
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		got := gatherValues(t, base)
		assert.Equal(c, 3.0, got[`controller_runtime_max_concurrent_reconciles{controller="configmap"}`], "GroupKindConcurrency wins over MaxConcurrentReconciles")
		assert.Equal(c, 2.0, got[`controller_runtime_max_concurrent_reconciles{controller="deployment"}`], "MaxConcurrentReconciles of the manager")
		assert.Equal(c, 5.0, got[`controller_runtime_max_concurrent_reconciles{controller="own"}`], "WithOptions wins")
	}, wait, 20*time.Millisecond)
	require.NoError(t, stop())
}
