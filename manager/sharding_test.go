package manager_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding"
)

// shardRecorder records, per object, the shards that reconciled it, and
// fails the test when two shards reconcile one object at once.
type shardRecorder struct {
	t       *testing.T
	mu      sync.Mutex
	by      map[string][]string // name -> shards, in order
	running map[string]string   // name -> shard reconciling it now
}

func (s *shardRecorder) reconciler(shard string) reconcile.Reconciler {
	return reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		s.mu.Lock()
		if other, ok := s.running[req.Name]; ok {
			s.t.Errorf("%s reconciled by %s and %s at once", req.Name, other, shard)
		}
		s.running[req.Name] = shard
		s.by[req.Name] = append(s.by[req.Name], shard)
		s.mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		s.mu.Lock()
		delete(s.running, req.Name)
		s.mu.Unlock()
		return reconcile.Result{}, nil
	})
}

func (s *shardRecorder) last(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.by[name]; len(l) > 0 {
		return l[len(l)-1]
	}
	return ""
}

// TestShardedBuilder runs three sharded managers with leader election on,
// each with plain builder code For(&corev1.PodTemplate{}) (a kind no other
// test of this package uses, since a ring shards its kinds cluster-wide),
// one of them also wrapping its reconciler by hand. Every replica, not
// only the leader, reconciles its share; when the third shard joins, the
// drains that the builder's gate acknowledges move objects to it.
func TestShardedBuilder(t *testing.T) {
	ctx := context.Background()
	live, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := unique("sharded")
	require.NoError(t, live.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	const n = 60
	for i := range n {
		require.NoError(t, live.Create(ctx, &corev1.PodTemplate{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("pt-%02d", i)},
			Template:   corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}},
		}))
	}
	ring := unique("ring")
	rec := &shardRecorder{t: t, by: map[string][]string{}, running: map[string]string{}}
	newShard := func(shard string, byHand bool) *running {
		mgr := newManager(t, restConfig, manager.Options{
			LeaderElection:                true,
			LeaderElectionID:              ring + "-leader",
			LeaderElectionNamespace:       ns,
			LeaderElectionReleaseOnCancel: true,
			LeaseDuration:                 leaseDuration,
			RenewDeadline:                 renewDeadline,
			RetryPeriod:                   retryPeriod,
			Cache:                         cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
			Sharding: sharding.Options{
				Ring:               ring,
				Objects:            []client.Object{&corev1.PodTemplate{}},
				Shard:              shard,
				LeaseDuration:      leaseDuration,
				RenewDeadline:      renewDeadline,
				RetryPeriod:        retryPeriod,
				SweepInterval:      500 * time.Millisecond,
				DrainCheckInterval: 200 * time.Millisecond,
				Webhook:            sharding.WebhookOptions{Disabled: true},
			},
		})
		r := rec.reconciler(shard)
		if byHand {
			r, err = mgr.Sharding().Reconciler(&corev1.PodTemplate{}, r)
			require.NoError(t, err)
		}
		require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.PodTemplate{}).Complete(r))
		return start(mgr)
	}
	// converged: every object is assigned to its shard on the hash ring
	// of shards, not draining, and was last reconciled by that shard.
	converged := func(shards ...string) func() bool {
		hr := sharding.NewHashRing(shards, 0)
		return func() bool {
			var l corev1.PodTemplateList
			if live.List(ctx, &l, client.InNamespace(ns)) != nil || len(l.Items) != n {
				return false
			}
			for _, pt := range l.Items {
				s := pt.Labels[sharding.ShardLabel(ring)]
				if s != hr.Shard(sharding.Key(schema.GroupKind{Kind: "PodTemplate"}, &pt)) ||
					rec.last(pt.Name) != s || pt.Labels[sharding.DrainLabel(ring)] != "" {
					return false
				}
			}
			return true
		}
	}
	perShard := func() map[string]int {
		var l corev1.PodTemplateList
		require.NoError(t, live.List(ctx, &l, client.InNamespace(ns)))
		out := map[string]int{}
		for _, pt := range l.Items {
			out[pt.Labels[sharding.ShardLabel(ring)]]++
		}
		return out
	}

	a, b := newShard("a", false), newShard("b", true)
	require.Eventually(t, converged("a", "b"), 60*time.Second, 50*time.Millisecond)
	two := perShard()
	assert.Positive(t, two["a"], "shard a reconciles its share")
	assert.Positive(t, two["b"], "shard b reconciles its share, leader or not")

	c := newShard("c", false)
	require.Eventually(t, converged("a", "b", "c"), 60*time.Second, 50*time.Millisecond,
		"objects move to the new shard: a and b acknowledge their drains")
	three := perShard()
	assert.Positive(t, three["c"])
	t.Logf("2 shards: %v; 3 shards: %v", two, three)

	for _, r := range []*running{c, b, a} {
		require.NoError(t, r.stop(t))
	}
}
