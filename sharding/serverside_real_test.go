package sharding_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/sharding"
)

func serverSide(o *sharding.Options) { o.Mode = sharding.ServerSide }

// cachedNames returns the names of the PodTemplates in rp's cache.
func (rp *replica) cachedNames(t *testing.T, ns string) []string {
	t.Helper()
	var l corev1.PodTemplateList
	require.NoError(t, rp.cache.List(context.Background(), &l, client.InNamespace(ns)))
	var out []string
	for _, pt := range l.Items {
		out = append(out, pt.Name)
	}
	sort.Strings(out)
	return out
}

// splitEvenly waits until the replicas' caches hold disjoint sets of the
// PodTemplates of ns whose union is every one of want, each replica some,
// and their Leases list disjoint ranges.
func splitEvenly(t *testing.T, ns string, want int, rps ...*replica) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		seen := map[string]string{}
		for _, rp := range rps {
			if err, ok := rp.ended(); ok {
				c.Errorf("the ring of %s ended: %v", rp.shard, err)
			}
			names := rp.cachedNames(t, ns)
			assert.NotEmpty(c, names, "shard %s caches nothing", rp.shard)
			for _, n := range names {
				if other, ok := seen[n]; ok {
					c.Errorf("%s cached by %s and %s", n, other, rp.shard)
				}
				seen[n] = rp.shard
			}
			assert.NotEqual(c, "none", rp.ring.Ranges(), rp.shard)
		}
		assert.Len(c, seen, want)
	}, 60*time.Second, 100*time.Millisecond)
}

// touchAll changes every PodTemplate of ns, so that each is reconciled
// again.
func touchAll(t *testing.T, c client.Client, ns string, n int, round int) {
	t.Helper()
	for i := range n {
		pt := podTemplate(ns, fmt.Sprintf("pt-%03d", i))
		patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"annotations":{"round":"%d"}}}`, round))
		require.NoError(t, c.Patch(context.Background(), pt, patch))
	}
}

func createAll(t *testing.T, c client.Client, ns string, n int) {
	t.Helper()
	for i := range n {
		require.NoError(t, c.Create(context.Background(), podTemplate(ns, fmt.Sprintf("pt-%03d", i))))
	}
}

// everyReconciledSince waits until every PodTemplate of ns was reconciled
// after since.
func everyReconciledSince(t *testing.T, w *overlapWitness, ns string, n int, since time.Time) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for i := range n {
			key := ns + "/" + fmt.Sprintf("pt-%03d", i)
			_, at := w.lastOf(key)
			assert.True(c, at.After(since), "%s not reconciled since %s", key, since.Format(time.StampMilli))
		}
	}, 60*time.Second, 100*time.Millisecond)
}

func TestServerSideSplitsObjectsAcrossThreeShards(t *testing.T) {
	admin, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := newTestNamespace(t, admin)
	const n = 60
	createAll(t, admin, ns, n)
	ring := unique("ss")
	w := newOverlapWitness()
	var rps []*replica
	for i := range 3 {
		rp := newReplica(t, ring, ns, fmt.Sprintf("s%d", i), w.reconciler(fmt.Sprintf("s%d", i)), serverSide)
		rp.runController(t)
		rps = append(rps, rp)
	}
	splitEvenly(t, ns, n, rps...)
	start := time.Now()
	touchAll(t, admin, ns, n, 1)
	everyReconciledSince(t, w, ns, n, start)
	assert.Empty(t, w.overlapsSeen())

	// The Leases list disjoint ranges that cover the space.
	var leases coordinationv1.LeaseList
	require.NoError(t, admin.List(context.Background(), &leases, client.InNamespace(ns), client.MatchingLabels{sharding.RingLabel: ring}))
	require.Len(t, leases.Items, 3)
	for _, l := range leases.Items {
		assert.Contains(t, l.Annotations, sharding.RangesAnnotation, l.Name)
	}
	for _, rp := range rps {
		require.NoError(t, rp.stop())
	}
}
