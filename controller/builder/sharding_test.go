package builder_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/reconcile"
)

// shardedManager is a testManager that shards ConfigMaps: its gate counts
// the requests it passes on. Deployments are "controlled": a controller of
// them is a mistake.
type shardedManager struct {
	*testManager
	gated atomic.Int32
	calls atomic.Int32 // ShardReconciler calls
}

var _ builder.ShardedManager = (*shardedManager)(nil)

type countingGate struct {
	m     *shardedManager
	inner reconcile.Reconciler
}

func (g *countingGate) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	g.m.gated.Add(1)
	return g.inner.Reconcile(ctx, req)
}

func (m *shardedManager) ShardReconciler(obj client.Object, r reconcile.Reconciler) (reconcile.Reconciler, bool, error) {
	m.calls.Add(1)
	gvk, err := apiutil.GVKForObject(obj, m.scheme)
	if err != nil {
		return nil, false, err
	}
	switch gvk.GroupKind() {
	case schema.GroupKind{Kind: "ConfigMap"}:
		if g, ok := r.(*countingGate); ok {
			return g, true, nil
		}
		return &countingGate{m: m, inner: r}, true, nil
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		return nil, true, errors.New("Deployment is a controlled kind")
	}
	return r, false, nil
}

func TestBuilderGatesShardedKinds(t *testing.T) {
	live, ns := newNamespace(t)
	m := &shardedManager{testManager: newManager(t, cfg, ns)}

	var reconciled atomic.Int32
	r := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		reconciled.Add(1)
		return reconcile.Result{}, nil
	})
	sharded, err := builder.ControllerManagedBy(m).For(&corev1.ConfigMap{}).Build(r)
	require.NoError(t, err)
	assert.False(t, sharded.NeedLeaderElection(), "a controller of a sharded kind runs on every replica")

	plain, err := builder.ControllerManagedBy(m).For(&corev1.Secret{}).Build(r)
	require.NoError(t, err)
	assert.True(t, plain.NeedLeaderElection(), "a kind that is not sharded keeps the default")

	// A reconciler gated by hand is handed to the manager, which does not
	// gate it twice.
	byHand, _, err := m.ShardReconciler(&corev1.ConfigMap{}, r)
	require.NoError(t, err)
	_, err = builder.ControllerManagedBy(m).Named("by-hand").For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).Build(byHand)
	require.NoError(t, err, "an explicit false is what sharding needs")

	_, err = builder.ControllerManagedBy(m).Named("leader-only").For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(true)}).Build(r)
	require.ErrorContains(t, err, `builder: controller "leader-only": For(*v1.ConfigMap) is a sharded kind, so the controller runs on every replica`)

	_, err = builder.ControllerManagedBy(m).For(&appsv1.Deployment{}).Build(r)
	require.EqualError(t, err, `builder: controller "deployment": For(*v1.Deployment): Deployment is a controlled kind`)

	stop, _ := m.start(t)
	require.NoError(t, live.Create(t.Context(), configMap(ns, "one")))
	require.Eventually(t, func() bool { return reconciled.Load() >= 2 }, wait, 20*time.Millisecond,
		"both ConfigMap controllers reconcile the ConfigMap")
	// Each reconcile of a ConfigMap went through exactly one gate: the
	// Secret controller's reconciles (none here) do not, and the
	// controller built from a reconciler gated by hand is not gated twice.
	// (A gate counts before it calls inner, so once two reconciles ran
	// every gate in front of them has counted.)
	assert.Equal(t, int32(2), reconciled.Load())
	assert.Equal(t, int32(2), m.gated.Load())
	require.NoError(t, stop())
}
