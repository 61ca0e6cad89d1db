package manager_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/sharding"
)

// TestServerSideShardedBuilder: two managers in sharding's ServerSide mode
// with plain builder code and no webhook server: each caches and
// reconciles its hash ranges of the objects, none twice at once, all of
// them between the two.
func TestServerSideShardedBuilder(t *testing.T) {
	ctx := context.Background()
	live, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := unique("ss")
	require.NoError(t, live.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	const n = 40
	for i := range n {
		require.NoError(t, live.Create(ctx, &corev1.PodTemplate{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("pt-%02d", i)},
			Template:   corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}},
		}))
	}
	ring := unique("ssring")
	rec := &shardRecorder{t: t, by: map[string][]string{}, running: map[string]string{}}
	var mgrs []*manager.Manager
	var runs []*running
	for _, shard := range []string{"a", "b"} {
		mgr := newManager(t, restConfig, manager.Options{
			LeaderElectionNamespace: ns,
			Cache:                   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
			Sharding: sharding.Options{
				Ring: ring, Objects: []client.Object{&corev1.PodTemplate{}}, Shard: shard, Mode: sharding.ServerSide,
				LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
			},
		})
		require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.PodTemplate{}).Complete(rec.reconciler(shard)))
		mgrs = append(mgrs, mgr)
		runs = append(runs, start(mgr))
	}
	// Each manager's cache holds its share, and the shares are disjoint.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		owner := map[string]string{}
		for i, mgr := range mgrs {
			var l corev1.PodTemplateList
			if err := mgr.GetCache().List(ctx, &l, client.InNamespace(ns)); err != nil {
				c.Errorf("manager %d: %v", i, err) // not started yet
				return
			}
			assert.NotEmpty(c, l.Items, "manager %d caches nothing", i)
			for _, pt := range l.Items {
				if o, ok := owner[pt.Name]; ok {
					c.Errorf("%s cached by %s and %s", pt.Name, o, mgr.Sharding().Shard())
				}
				owner[pt.Name] = mgr.Sharding().Shard()
			}
		}
		assert.Len(c, owner, n)
		for name, shard := range owner {
			assert.Equal(c, shard, rec.last(name), "%s last reconciled by another shard than caches it", name)
		}
	}, 60*time.Second, 100*time.Millisecond)
	for _, r := range runs {
		require.NoError(t, r.stop(t))
	}
}
