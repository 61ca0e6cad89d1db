package multicluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding"
)

// TestManagerShardsTheFleet: two managers with leader election, both
// Options.Sharding (no sharded kinds) and Options.Clusters: the builder
// runs the fleet controller on both replicas, not only on the leader,
// behind the placement's gate, and each cluster is reconciled by the
// replica that holds it, by no other.
func TestManagerShardsTheFleet(t *testing.T) {
	members := shardedFleet(t, 8)
	ring := fmt.Sprintf("mc-manager-%d", time.Now().UnixNano()%1_000_000)
	w := newWitness()
	newReplica := func(name string) (*manager.Manager, func() error) {
		p := newProvider()
		mgr, err := manager.New(cfgs[0], manager.Options{Logger: testenv.Logger(), Clusters: p,
			LeaderElection: true, LeaderElectionID: ring + "-leader", LeaderElectionNamespace: "default",
			Sharding: sharding.Options{Ring: ring, Shard: name, LeaseDuration: testLease, RenewDeadline: testRenew, RetryPeriod: testRetry},
			Metrics:  manager.MetricsOptions{BindAddress: "0"}, HealthProbeBindAddress: "0"})
		require.NoError(t, err)
		label := testLabel(t)
		require.NoError(t, builder.ControllerManagedBy(mgr).Named(label+"-"+name).
			For(&corev1.ConfigMap{}, builder.OnFleet, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return o.GetLabels()["test"] == label
			}))).
			Complete(w.wrap(name, reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				if _, err := mgr.GetCluster(ctx, req.Cluster); err != nil {
					return reconcile.Result{}, err
				}
				return reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
			}))))
		stop := testenv.Start(mgr)
		for _, m := range members {
			p.add(t, m.name, m.cfg)
		}
		return mgr, stop
	}
	a, stopA := newReplica("a")
	b, stopB := newReplica("b")
	shards := func() map[string][]string {
		return map[string][]string{"a": a.GetShardedFleet().Held(), "b": b.GetShardedFleet().Held()}
	}
	require.Eventually(t, func() bool {
		s := shards()
		return len(s["a"])+len(s["b"]) == len(members) && len(s["a"]) > 0 && len(s["b"]) > 0
	}, testTimeout, 20*time.Millisecond, "the two managers split the clusters")
	held := shards()
	split := time.Now()
	for replica, clusters := range held {
		for _, c := range clusters {
			require.Eventually(t, func() bool { _, ok := w.firstBy(c, replica, time.Time{}); return ok }, testTimeout,
				20*time.Millisecond, "%s reconciles its cluster %s (leader or not)", replica, c)
		}
	}
	assert.Equal(t, 1, btoi(a.GetShardedFleet().HoldsLocal())+btoi(b.GetShardedFleet().HoldsLocal()),
		"one replica holds the manager's own cluster")
	stopping := time.Now()
	require.NoError(t, stopA())
	require.Eventually(t, func() bool { return len(b.GetShardedFleet().Held()) == len(members) }, testTimeout,
		20*time.Millisecond, "b takes over a's clusters when a stops")
	require.NoError(t, stopB())
	assert.Empty(t, w.overlaps(), "no cluster is reconciled by two replicas at once")
	w.mu.Lock()
	for replica, clusters := range held {
		for _, c := range clusters {
			for _, r := range w.runs {
				if r.cluster == c && r.start.After(split) && r.start.Before(stopping) {
					assert.Equal(t, replica, r.replica, "cluster %s, held by %s, was reconciled by %s", c, replica, r.replica)
				}
			}
		}
	}
	w.mu.Unlock()
	settleMappers(t)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestBuilderOnShardedFleetRefuses: on a manager whose fleet is sharded,
// a fleet controller that asks for leader election is refused (only the
// leader's clusters would be reconciled), and so is one whose For kind is
// sharded by objects too.
func TestBuilderOnShardedFleetRefuses(t *testing.T) {
	mgr, err := manager.New(cfgs[0], manager.Options{Logger: testenv.Logger(), Clusters: newProvider(),
		Sharding: sharding.Options{Ring: "mc-refuses", Shard: "a", Namespace: "default", Objects: []client.Object{&corev1.Secret{}},
			Webhook: sharding.WebhookOptions{Disabled: true}},
		Metrics: manager.MetricsOptions{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	require.NoError(t, err)
	require.NotNil(t, mgr.GetShardedFleet())
	nop := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	leader := true
	err = builder.ControllerManagedBy(mgr).Named("elected").For(&corev1.ConfigMap{}, builder.OnFleet).
		WithOptions(controller.Options{NeedLeaderElection: &leader}).Complete(nop)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `controller "elected" watches the sharded fleet, so it runs on every replica`)
	err = builder.ControllerManagedBy(mgr).Named("both").For(&corev1.Secret{}, builder.OnFleet).Complete(nop)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `For(*v1.Secret) is a sharded kind and the controller watches the sharded fleet`)
	require.NoError(t, builder.ControllerManagedBy(mgr).Named("fleet").For(&corev1.ConfigMap{}, builder.OnFleet).Complete(nop))
}
