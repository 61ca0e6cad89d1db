package sharding_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
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
	// The segments gauge of each shard adds up to the whole space, and
	// each shard took segments.
	total := 0.0
	for _, rp := range rps {
		total += gauge(t, rp.reg, "kubeloop_sharding_segments")
		assert.Positive(t, segmentMoves(t, rp.reg, "in"), rp.shard)
	}
	assert.Equal(t, 127.0, total)
	for _, rp := range rps {
		require.NoError(t, rp.stop())
	}
}

// TestServerSideShardJoinsAndLeavesUnderLoad: two shards split 60
// objects while a writer keeps changing them; a third joins, then one
// leaves (its Start returns, releasing its Lease). The objects are split
// anew each time, never reconciled by two shards at once, and every one
// is reconciled after the moves.
func TestServerSideShardJoinsAndLeavesUnderLoad(t *testing.T) {
	admin, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := newTestNamespace(t, admin)
	const n = 60
	createAll(t, admin, ns, n)
	ring := unique("ss")
	w := newOverlapWitness()
	// Slow reconciles (100 ms), so that moves meet reconciles in flight.
	slow := &overlapCheck{running: map[string]string{}}
	start := func(name string) *replica {
		rp := newReplica(t, ring, ns, name, slow.wrap(name, w.reconciler(name), 100*time.Millisecond), serverSide)
		w.watchDeletions(admin, name, rp.cache)
		rp.runController(t)
		return rp
	}
	a, b := start("s0"), start("s1")
	splitEvenly(t, ns, n, a, b)

	ctx, stopLoad := context.WithCancel(context.Background())
	loaded := make(chan int)
	go func() {
		i := 0
		defer func() { loaded <- i }()
		for ctx.Err() == nil {
			pt := podTemplate(ns, fmt.Sprintf("pt-%03d", i%n))
			patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"annotations":{"load":"%d"}}}`, i))
			if err := admin.Patch(ctx, pt, patch); err != nil && ctx.Err() == nil {
				t.Errorf("load: %v", err)
				return
			}
			i++
			time.Sleep(5 * time.Millisecond)
		}
	}()

	joined := time.Now()
	c := start("s2")
	splitEvenly(t, ns, n, a, b, c)
	t.Logf("3 shards split the objects %s after the third started", time.Since(joined).Round(time.Millisecond))

	left := time.Now()
	require.NoError(t, a.stop())
	splitEvenly(t, ns, n, b, c)
	t.Logf("2 shards split the objects %s after one left", time.Since(left).Round(time.Millisecond))

	stopLoad()
	t.Logf("%d writes under load", <-loaded)
	since := time.Now()
	touchAll(t, admin, ns, n, 1)
	everyReconciledSince(t, w, ns, n, since)
	assert.Empty(t, w.overlapsSeen())
	assert.Empty(t, slow.seen(), "no object reconciled by two shards at once")
	assert.Empty(t, w.falseDeletions(), "no move taken for a deletion")
	require.NoError(t, b.stop())
	require.NoError(t, c.stop())
}

// nsReplica is a replica in ServerSide mode by namespace over every
// namespace: its cache holds PodTemplates (the sharded kind) and
// ConfigMaps (Controlled, children of the PodTemplates).
type nsReplica struct {
	shard string
	ring  *sharding.Ring
	cache *cache.InformerCache
	stop  func()
}

func newNSReplica(t *testing.T, ringName, leaseNS, shard string, inner reconcile.Reconciler) *nsReplica {
	t.Helper()
	live, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ring, err := sharding.New(live, sharding.Options{
		Ring: ringName, Objects: []client.Object{&corev1.PodTemplate{}}, Controlled: []client.Object{&corev1.ConfigMap{}},
		Namespace: leaseNS, Shard: shard, LeaseDuration: realLease, RenewDeadline: realRenew, RetryPeriod: realRetry,
		Mode: sharding.ServerSide, Key: sharding.ShardByNamespace, Logger: realLogger().WithName(shard), Metrics: prometheus.NewRegistry(),
	})
	require.NoError(t, err)
	co := cache.Options{Logger: realLogger()}
	require.NoError(t, ring.ConfigureCache(&co))
	ca, err := cache.New(restConfig, co)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, obj := range []client.Object{&corev1.PodTemplate{}, &corev1.ConfigMap{}} {
		_, err = ca.GetInformer(ctx, obj)
		require.NoError(t, err)
	}
	wg.Go(func() { _ = ca.Start(ctx) })
	require.True(t, ca.WaitForCacheSync(ctx))
	gate, err := ring.Reconciler(&corev1.PodTemplate{}, inner)
	require.NoError(t, err)
	ctrl, err := controller.NewUnmanaged("ns-"+shard, controller.Options{Reconciler: gate, MaxConcurrentReconciles: 4, Logger: realLogger(), SkipNameValidation: ptrTrue()})
	require.NoError(t, err)
	require.NoError(t, ctrl.Watch(source.Kind(ca, &corev1.PodTemplate{}, &handler.EnqueueRequestForObject{})))
	wg.Go(func() { _ = ctrl.Start(ctx) })
	ringErr := make(chan error, 1)
	wg.Go(func() { ringErr <- ring.Run(ctx, ca) })
	rp := &nsReplica{shard: shard, ring: ring, cache: ca}
	rp.stop = func() {
		cancel()
		wg.Wait()
		require.NoError(t, <-ringErr)
	}
	return rp
}

// TestServerSideByNamespaceChildrenFollowOwners: by namespace, an owner
// and its children hash alike, so the shard that reconciles an owner
// caches its children, and no other shard does.
func TestServerSideByNamespaceChildrenFollowOwners(t *testing.T) {
	admin, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	leaseNS := newTestNamespace(t, admin)
	const spaces = 8
	var namespaces []string
	for range spaces {
		ns := newTestNamespace(t, admin)
		namespaces = append(namespaces, ns)
		owner := podTemplate(ns, "owner")
		require.NoError(t, admin.Create(context.Background(), owner))
		for j := range 2 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("child-%d", j),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "PodTemplate", Name: "owner", UID: owner.UID, Controller: ptrTrue()}}}}
			require.NoError(t, admin.Create(context.Background(), cm))
		}
	}
	ring := unique("ssns")
	w := newOverlapWitness()
	var rps []*nsReplica
	for i := range 2 {
		name := fmt.Sprintf("n%d", i)
		rps = append(rps, newNSReplica(t, ring, leaseNS, name, w.reconciler(name)))
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, ns := range namespaces {
			var holders []string
			for _, rp := range rps {
				var pt corev1.PodTemplate
				err := rp.cache.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "owner"}, &pt)
				var cms corev1.ConfigMapList
				require.NoError(t, rp.cache.List(context.Background(), &cms, client.InNamespace(ns)))
				children := 0
				for _, cm := range cms.Items {
					if len(cm.OwnerReferences) > 0 {
						children++
					}
				}
				if err == nil {
					holders = append(holders, rp.shard)
					assert.Equal(c, 2, children, "%s caches the owner in %s but %d of its 2 children", rp.shard, ns, children)
				} else {
					assert.Zero(c, children, "%s caches children in %s without their owner", rp.shard, ns)
				}
			}
			assert.Len(c, holders, 1, "owner in %s cached by %v", ns, holders)
			if len(holders) == 1 {
				shard, _ := w.lastOf(ns + "/owner")
				assert.Equal(c, holders[0], shard, "owner in %s reconciled by another shard than caches it", ns)
			}
		}
	}, 60*time.Second, 100*time.Millisecond)
	assert.Empty(t, w.overlapsSeen())
	for _, rp := range rps {
		rp.stop()
	}
}

// TestServerSideRefusesARealServerWithoutTheGate: kube-apiserver 1.37
// with ShardedListAndWatch off drops shardSelector and lists every
// object; Start fails naming the kind and the gate. (The package's own
// control plane has the gate on: envtest enables it.)
func TestServerSideRefusesARealServerWithoutTheGate(t *testing.T) {
	env := &envtest.Environment{Authorization: "AlwaysAllow", APIServerFlags: []string{"--feature-gates=ShardedListAndWatch=false"}}
	cfg, err := env.Start()
	require.NoError(t, err)
	defer func() { require.NoError(t, env.Stop()) }()
	live, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	ring, err := sharding.New(live, sharding.Options{Ring: "off", Objects: []client.Object{&corev1.PodTemplate{}}, Namespace: "default",
		Mode: sharding.ServerSide, Logger: realLogger(), Metrics: prometheus.NewRegistry()})
	require.NoError(t, err)
	err = ring.Start(context.Background())
	require.ErrorIs(t, err, sharding.ErrServerSideUnsupported)
	assert.ErrorContains(t, err, "PodTemplate")
	assert.ErrorContains(t, err, "--feature-gates=ShardedListAndWatch=true")

	// The package's control plane refuses the probe: the gate is on.
	var l corev1.PodTemplateList
	admin, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	err = admin.List(context.Background(), &l, &client.ListOptions{Raw: &metav1.ListOptions{ShardSelector: "shardRange(object.metadata.uid, '0x0', '0x1')"}})
	assert.ErrorContains(t, err, "invalid shard selector")
}

// TestServerSideRejoin: one of three shards is cut off (its connection
// blackholed) for longer than LeaseDuration while a writer keeps changing
// the objects; the two others take its ranges once its Lease expired.
// When the connection is back it rejoins from no range, and takes its
// share again through the handshake. No object is reconciled by two
// shards at once, and no move is passed on as a deletion.
func TestServerSideRejoin(t *testing.T) {
	admin, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := newTestNamespace(t, admin)
	const n = 40
	createAll(t, admin, ns, n)
	ring := unique("ssrj")
	w := newOverlapWitness()
	var rps []*replica
	for i := range 3 {
		name := fmt.Sprintf("s%d", i)
		rp := newReplica(t, ring, ns, name, w.reconciler(name), serverSide)
		w.watchDeletions(admin, name, rp.cache)
		rp.runController(t)
		rps = append(rps, rp)
	}
	splitEvenly(t, ns, n, rps...)

	ctx, stopLoad := context.WithCancel(context.Background())
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		for i := 0; ctx.Err() == nil; i++ {
			patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"metadata":{"annotations":{"load":"%d"}}}`, i))
			_ = admin.Patch(ctx, podTemplate(ns, fmt.Sprintf("pt-%03d", i%n)), patch)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	defer func() { stopLoad(); <-loaded }()

	c := rps[2]
	c.proxy.Blackhole(true)
	cut := time.Now()
	// The two others hold every range (c's cache keeps what it had).
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		held := 0
		for _, rp := range rps[:2] {
			held += countRuns(rp.ring.Ranges())
		}
		assert.Equal(ct, 127, held)
	}, 60*time.Second, 50*time.Millisecond)
	t.Logf("the others hold every range %s after the cut", time.Since(cut).Round(time.Millisecond))
	c.proxy.Blackhole(false)
	splitEvenly(t, ns, n, rps...)
	stopLoad()
	<-loaded
	since := time.Now()
	touchAll(t, admin, ns, n, 1)
	everyReconciledSince(t, w, ns, n, since)
	assert.Empty(t, w.overlapsSeen(), "no object reconciled by two shards at once")
	assert.Empty(t, w.falseDeletions(), "no move taken for a deletion")
	for _, rp := range rps {
		assert.NoError(t, rp.stop())
	}
}

// countRuns counts the segments of Ring.Ranges' runs ("0-41,84-126").
func countRuns(runs string) int {
	if runs == "" || runs == "none" {
		return 0
	}
	n := 0
	for part := range strings.SplitSeq(runs, ",") {
		from, to, ok := strings.Cut(part, "-")
		if !ok {
			n++
			continue
		}
		a, _ := strconv.Atoi(from)
		z, _ := strconv.Atoi(to)
		n += z - a + 1
	}
	return n
}

// overlapCheck wraps reconcilers so that each takes d, and records every
// reconcile that starts while another shard reconciles the same object.
type overlapCheck struct {
	mu       sync.Mutex
	running  map[string]string
	overlaps []string
}

func (o *overlapCheck) wrap(shard string, inner reconcile.Reconciler, d time.Duration) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		key := req.String()
		o.mu.Lock()
		if other, ok := o.running[key]; ok && other != shard {
			o.overlaps = append(o.overlaps, fmt.Sprintf("%s reconciled by %s and %s at once", key, other, shard))
		}
		o.running[key] = shard
		o.mu.Unlock()
		time.Sleep(d)
		o.mu.Lock()
		delete(o.running, key)
		o.mu.Unlock()
		return inner.Reconcile(ctx, req)
	})
}

func (o *overlapCheck) seen() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.overlaps...)
}

// gauge returns the value of the one series of the named gauge in reg.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Errorf("no single series of %s", name)
	return 0
}

// segmentMoves returns kubeloop_sharding_segment_moves_total{direction}.
func segmentMoves(t *testing.T, reg *prometheus.Registry, direction string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "kubeloop_sharding_segment_moves_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "direction" && l.GetValue() == direction {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
