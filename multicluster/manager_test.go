package multicluster_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/reconcile"
)

// TestManagerWithFleet: a manager whose own cluster is one plane and
// whose Options.Clusters engages the other two; a builder-made controller
// with OnClusters(every cluster) reconciles the objects of all three,
// each through the client GetCluster(ctx, req.Cluster) returns; one with
// the default watches its own cluster only.
func TestManagerWithFleet(t *testing.T) {
	p := newProvider()
	mgr, err := manager.New(cfgs[2], manager.Options{Clusters: p, Logger: testenv.Logger()})
	require.NoError(t, err)
	sel := builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()["test"] == testLabel(t) }))

	writes := func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		cl, err := mgr.GetCluster(ctx, req.Cluster)
		if err != nil {
			return reconcile.Result{}, err
		}
		var cm corev1.ConfigMap
		if err := cl.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		name := req.Cluster
		if name == "" {
			name = "local"
		}
		if cm.Data["cluster"] == name {
			return reconcile.Result{}, nil
		}
		cm.Data = map[string]string{"cluster": name}
		return reconcile.Result{}, cl.GetClient().Update(ctx, &cm)
	}
	require.NoError(t, builder.ControllerManagedBy(mgr).Named("everywhere").
		For(&corev1.ConfigMap{}, builder.OnClusters(func(string) bool { return true }), sel).
		Complete(reconcile.Func(writes)))
	var localOnly []reconcile.Request
	require.NoError(t, builder.ControllerManagedBy(mgr).Named("local-only").
		For(&corev1.ConfigMap{}, sel).
		Complete(reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
			localOnly = append(localOnly, req) // one worker
			return reconcile.Result{}, nil
		})))

	local, east, west := configMap(t, cfgs[2], "local"), configMap(t, cfgs[0], "east"), configMap(t, cfgs[1], "west")
	stop := testenv.Start(mgr)
	p.add(t, "east", cfgs[0])
	p.add(t, "west", cfgs[1])
	eventually(t, func() bool {
		return dataOf(t, cfgs[2], local) == "local" && dataOf(t, cfgs[0], east) == "east" && dataOf(t, cfgs[1], west) == "west"
	}, "every cluster's object is written through its own client")
	require.NotNil(t, mgr.GetFleet())
	assert.Equal(t, []string{"east", "west"}, mgr.GetFleet().Clusters())
	own, err := mgr.GetCluster(context.Background(), "")
	require.NoError(t, err)
	assert.Same(t, mgr.GetClient(), own.GetClient(), `"" is the manager's own cluster`)
	_, err = mgr.GetCluster(context.Background(), "north")
	assert.ErrorIs(t, err, multicluster.ErrClusterNotFound)
	require.NoError(t, stop())
	for _, req := range localOnly {
		assert.Empty(t, req.Cluster, "the default watch is of the manager's own cluster")
	}
	assert.NotEmpty(t, localOnly)
}

// TestBuilderOnFleetNeedsClusters: OnFleet on a manager without
// Options.Clusters is refused, naming the controller.
func TestBuilderOnFleetNeedsClusters(t *testing.T) {
	mgr, err := manager.New(cfgs[2], manager.Options{Logger: testenv.Logger()})
	require.NoError(t, err)
	err = builder.ControllerManagedBy(mgr).Named("fleet").For(&corev1.ConfigMap{}, builder.OnFleet).
		Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `controller "fleet" watches a fleet, but the manager has no Options.Clusters`)
	own, err := mgr.GetCluster(context.Background(), "")
	require.NoError(t, err)
	assert.Equal(t, "", own.Name())
	_, err = mgr.GetCluster(context.Background(), "east")
	assert.ErrorIs(t, err, multicluster.ErrClusterNotFound)
}
