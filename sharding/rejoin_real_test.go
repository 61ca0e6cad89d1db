package sharding_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding"
)

// overlapWitness records every reconcile per key and shard, and every time
// two shards reconcile one key at once.
type overlapWitness struct {
	mu       sync.Mutex
	running  map[string]string // key -> shard reconciling it now
	last     map[string]string // key -> shard of the last reconcile
	lastAt   map[string]time.Time
	perShard map[string][]time.Time
	overlaps []string
	// With live and caches set: reconciles that found no object in their
	// shard's cache while it exists on the API server (a move taken for a
	// deletion).
	live          client.Reader
	caches        map[string]client.Reader
	falseDeletion []string
}

func newOverlapWitness() *overlapWitness {
	return &overlapWitness{running: map[string]string{}, last: map[string]string{}, lastAt: map[string]time.Time{}, perShard: map[string][]time.Time{}}
}

func (w *overlapWitness) reconciler(shard string) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		key := req.String()
		w.mu.Lock()
		if other, ok := w.running[key]; ok {
			w.overlaps = append(w.overlaps, fmt.Sprintf("%s reconciled by %s and %s at once", key, other, shard))
		}
		w.running[key] = shard
		cached := w.caches[shard]
		w.mu.Unlock()
		if cached != nil {
			var pt corev1.PodTemplate
			if err := cached.Get(ctx, req.NamespacedName, &pt); apierrors.IsNotFound(err) {
				if w.live.Get(ctx, req.NamespacedName, &pt) == nil {
					w.mu.Lock()
					w.falseDeletion = append(w.falseDeletion, fmt.Sprintf("%s reconciled by %s as deleted; it exists, labelled %v", key, shard, pt.Labels))
					w.mu.Unlock()
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
		w.mu.Lock()
		delete(w.running, key)
		now := time.Now()
		w.last[key], w.lastAt[key] = shard, now
		w.perShard[shard] = append(w.perShard[shard], now)
		w.mu.Unlock()
		return reconcile.Result{}, nil
	})
}

// firstAfter returns when shard first finished a reconcile after t.
func (w *overlapWitness) firstAfter(shard string, t time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, at := range w.perShard[shard] {
		if at.After(t) {
			return at, true
		}
	}
	return time.Time{}, false
}

func (w *overlapWitness) lastOf(key string) (string, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last[key], w.lastAt[key]
}

func (w *overlapWitness) overlapsSeen() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.overlaps...)
}

// watchDeletions makes the witness check each reconcile of shard whose
// cache has no object against live.
func (w *overlapWitness) watchDeletions(live client.Reader, shard string, cache client.Reader) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.caches == nil {
		w.caches = map[string]client.Reader{}
	}
	w.live = live
	w.caches[shard] = cache
}

func (w *overlapWitness) falseDeletions() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.falseDeletion...)
}

// TestRingRejoinsAfterAllReplicasAreCut: three replicas, each with its own
// connection; the fault proxies cut all of them at once for longer than
// LeaseDuration, so every shard loses its Lease. Once the connections are
// back, every Ring rejoins without Start returning: it holds its Lease
// again and reconciles again, the objects converge to their shards, and
// at no time did two shards reconcile one object at once.
func TestRingRejoinsAfterAllReplicasAreCut(t *testing.T) {
	ctx := context.Background()
	admin, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := newTestNamespace(t, admin)
	const n = 40
	for i := range n {
		require.NoError(t, admin.Create(ctx, podTemplate(ns, fmt.Sprintf("pt-%02d", i))))
	}
	ringName := unique("bend")
	shards := []string{unique("a"), unique("b"), unique("c")}
	w := newOverlapWitness()
	begin := time.Now()
	var reps []*replica
	for _, s := range shards {
		rp := newReplica(t, ringName, ns, s, w.reconciler(s))
		rp.runController(t)
		reps = append(reps, rp)
	}
	hr := sharding.NewHashRing(shards, 0)
	// converged: every object is on its shard, not draining, and was last
	// reconciled by that shard after since.
	var why string // why the ring has not converged, for the failure message
	converged := func(since time.Time) func() bool {
		return func() bool {
			var l corev1.PodTemplateList
			if err := admin.List(ctx, &l, client.InNamespace(ns)); err != nil || len(l.Items) != n {
				why = fmt.Sprintf("list: %v, %d objects", err, len(l.Items))
				return false
			}
			for _, pt := range l.Items {
				s := pt.Labels[sharding.ShardLabel(ringName)]
				by, at := w.lastOf(ns + "/" + pt.Name)
				if want := hr.Shard(sharding.Key(schema.GroupKind{Kind: "PodTemplate"}, &pt)); s != want || pt.Labels[sharding.DrainLabel(ringName)] != "" ||
					by != s || !at.After(since) {
					why = fmt.Sprintf("%s: on %q (want %q), drain %q, last reconciled by %q at %s (since %s)", pt.Name, s, want,
						pt.Labels[sharding.DrainLabel(ringName)], by, at.Format("15:04:05.000"), since.Format("15:04:05.000"))
					return false
				}
			}
			return true
		}
	}
	if !assert.Eventually(t, converged(begin), 60*time.Second, 50*time.Millisecond, "the ring converges") {
		t.Fatalf("not converged: %s", why)
	}
	t.Logf("converged %s after the start", time.Since(begin).Round(time.Millisecond))

	cut := time.Now()
	for _, rp := range reps {
		rp.proxy.Blackhole(true)
	}
	require.Eventually(t, func() bool {
		for _, rp := range reps {
			if rp.ring.Checker(nil) == nil {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "every shard fences itself")
	fenced := time.Since(cut)
	time.Sleep(realLease + time.Second) // the Leases lapse for every observer too
	for _, rp := range reps {
		if err, ended := rp.ended(); ended {
			t.Fatalf("shard %s: Start returned during the cut: %v", rp.shard, err)
		}
	}
	restored := time.Now()
	for _, rp := range reps {
		rp.proxy.Blackhole(false)
	}
	t.Logf("cut for %s; every shard fenced %s after the cut (RenewDeadline %s)", restored.Sub(cut).Round(time.Millisecond), fenced.Round(time.Millisecond), realRenew)

	// Every Ring rejoins: it holds its Lease and reconciles again.
	for _, rp := range reps {
		require.Eventually(t, func() bool { return rp.ring.Checker(nil) == nil }, 30*time.Second, 10*time.Millisecond, "%s holds its Lease again", rp.shard)
	}
	held := time.Since(restored)
	// A fresh change to every object: each is reconciled by its shard.
	changed := time.Now()
	// A merge patch, not Get and Update: the sharder may still be
	// relabelling objects moved while the ring was out, and this change
	// must not conflict with it.
	for i := range n {
		pt := &corev1.PodTemplate{}
		pt.Namespace, pt.Name = ns, fmt.Sprintf("pt-%02d", i)
		require.NoError(t, admin.Patch(ctx, pt, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"after":"cut"}}}`))))
	}
	if !assert.Eventually(t, converged(changed), 60*time.Second, 50*time.Millisecond, "the ring converges again") {
		t.Fatalf("not converged: %s", why)
	}
	convergedAfter := time.Since(restored)
	for _, rp := range reps {
		at, ok := w.firstAfter(rp.shard, restored)
		require.True(t, ok, "%s reconciles again", rp.shard)
		t.Logf("%s: first reconcile %s after the restore; rejoins %v", rp.shard, at.Sub(restored).Round(time.Millisecond),
			counter(t, rp.reg, "kubeloop_sharding_rejoins_total"))
		assert.Equal(t, 1.0, counter(t, rp.reg, "kubeloop_sharding_shard_lease_losses_total"), "%s lost its Lease once", rp.shard)
		assert.Equal(t, 1.0, counter(t, rp.reg, "kubeloop_sharding_rejoins_total"), "%s rejoined once", rp.shard)
		if err, ended := rp.ended(); ended {
			t.Fatalf("shard %s: Start returned: %v", rp.shard, err)
		}
	}
	t.Logf("every Lease held again %s after the restore; converged after a fresh change %s after the restore",
		held.Round(time.Millisecond), convergedAfter.Round(time.Millisecond))
	assert.Empty(t, w.overlapsSeen(), "no object reconciled by two shards at once")
	for _, rp := range reps {
		assert.NoError(t, rp.stop(), "%s: Start returns nil on stop", rp.shard)
	}
}

// TestExitOnLeaseLoss: with ExitOnLeaseLoss a Ring whose connection is cut
// returns an error wrapping ErrLeaseLost, naming the ring and the shard,
// once RenewDeadline has passed without a renewal.
func TestExitOnLeaseLoss(t *testing.T) {
	admin, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := newTestNamespace(t, admin)
	ringName, shard := unique("exit"), unique("a")
	rp := newReplica(t, ringName, ns, shard, nil, func(o *sharding.Options) { o.ExitOnLeaseLoss = true })
	require.Eventually(t, func() bool { return rp.ring.Checker(nil) == nil }, 30*time.Second, 10*time.Millisecond)
	rp.proxy.Blackhole(true)
	cut := time.Now()
	var err2 error
	require.Eventually(t, func() bool {
		e, ended := rp.ended()
		err2 = e
		return ended
	}, 10*time.Second, 10*time.Millisecond, "Start returns")
	t.Logf("Start returned %s after the cut: %v", time.Since(cut).Round(time.Millisecond), err2)
	require.ErrorIs(t, err2, sharding.ErrLeaseLost)
	require.ErrorIs(t, err2, client.ErrLeaseLost)
	assert.Contains(t, err2.Error(), fmt.Sprintf("ring %q shard %q", ringName, shard))
	rp.proxy.Blackhole(false)
	require.ErrorIs(t, rp.stop(), sharding.ErrLeaseLost)
}

// TestRejoinedShardDoesNotReconcileMovedObjects: shard c alone is cut
// off; the others reassign its objects (moves without a drain, since c is
// gone) and reconcile them while a writer keeps changing every object. c
// comes back with a stale cache (its watch is held for 3 s after it
// admits reconciles again): its requests for the objects it had, requeued
// while it was out, find them in its cache as they were, but the gate
// confirms each with a live read after the rejoin and drops them, so no
// object is reconciled by two shards at once; once its cache catches up,
// the objects that hash to c drain back to it. The cache's catch-up brings
// the moved objects' requests as NotFound (they left its label selector):
// none reaches the reconciler as a deletion.
func TestRejoinedShardDoesNotReconcileMovedObjects(t *testing.T) {
	ctx := context.Background()
	admin, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := newTestNamespace(t, admin)
	const n = 30
	for i := range n {
		require.NoError(t, admin.Create(ctx, podTemplate(ns, fmt.Sprintf("pt-%02d", i))))
	}
	ringName := unique("moved")
	shards := []string{unique("a"), unique("b"), unique("c")}
	w := newOverlapWitness()
	begin := time.Now()
	var reps []*replica
	for _, s := range shards {
		rp := newReplica(t, ringName, ns, s, w.reconciler(s))
		w.watchDeletions(admin, s, rp.cache)
		rp.runController(t)
		reps = append(reps, rp)
	}
	c := reps[2]
	var why string
	on := func(live []string, since time.Time) func() bool {
		hr := sharding.NewHashRing(live, 0)
		return func() bool {
			var l corev1.PodTemplateList
			if err := admin.List(ctx, &l, client.InNamespace(ns)); err != nil || len(l.Items) != n {
				why = fmt.Sprintf("list: %v, %d objects", err, len(l.Items))
				return false
			}
			for _, pt := range l.Items {
				s := pt.Labels[sharding.ShardLabel(ringName)]
				by, at := w.lastOf(ns + "/" + pt.Name)
				if want := hr.Shard(sharding.Key(schema.GroupKind{Kind: "PodTemplate"}, &pt)); s != want || pt.Labels[sharding.DrainLabel(ringName)] != "" ||
					by != s || !at.After(since) {
					why = fmt.Sprintf("%s: on %q (want %q), last reconciled by %q", pt.Name, s, want, by)
					return false
				}
			}
			return true
		}
	}
	if !assert.Eventually(t, on(shards, begin), 60*time.Second, 50*time.Millisecond, "the ring converges") {
		t.Fatalf("not converged: %s", why)
	}
	var onC int
	var l corev1.PodTemplateList
	require.NoError(t, admin.List(ctx, &l, client.InNamespace(ns)))
	for _, pt := range l.Items {
		if pt.Labels[sharding.ShardLabel(ringName)] == c.shard {
			onC++
		}
	}
	require.Positive(t, onC, "c has objects to lose")

	// A writer changes every object, so that the other shards reconcile
	// them all the time.
	stopWriter := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for i := 0; ; i++ {
			select {
			case <-stopWriter:
				return
			case <-time.After(20 * time.Millisecond):
			}
			pt := podTemplate(ns, fmt.Sprintf("pt-%02d", i%n))
			_ = admin.Patch(ctx, pt, mark(fmt.Sprint("w", i)))
		}
	}()
	defer func() {
		select {
		case <-stopWriter:
		default:
			close(stopWriter)
		}
		<-writerDone
	}()

	c.proxy.Blackhole(true)
	cut := time.Now()
	if !assert.Eventually(t, on(shards[:2], cut), 30*time.Second, 50*time.Millisecond, "c's objects move to a and b") {
		t.Fatalf("not moved: %s", why)
	}
	t.Logf("c's %d objects moved and reconciled elsewhere %s after the cut", onC, time.Since(cut).Round(time.Millisecond))
	// c's cache stays as it was at the cut: its watch ends, and the next
	// one is held without an answer.
	releaseWatches := c.proxy.AddRule(faultproxy.Rule{Match: faultproxy.Watches, Hold: true})
	c.proxy.CutWatches()
	restored := time.Now()
	c.proxy.Blackhole(false)
	require.Eventually(t, func() bool { return counter(t, c.reg, "kubeloop_sharding_rejoins_total") == 1 }, 30*time.Second, 10*time.Millisecond, "c rejoins")
	t.Logf("c admits reconciles again %s after the restore", time.Since(restored).Round(time.Millisecond))
	time.Sleep(3 * time.Second) // c's requeued requests meet its stale cache
	releaseWatches()
	c.proxy.Reject(faultproxy.CloseConnections) // ends the held watch: the cache catches up
	c.proxy.Reject(faultproxy.Pass)
	close(stopWriter)
	<-writerDone
	settled := time.Now()
	for i := range n { // one more change each, after which each is reconciled by its shard
		require.NoError(t, admin.Patch(ctx, podTemplate(ns, fmt.Sprintf("pt-%02d", i)), mark("final")))
	}
	if !assert.Eventually(t, on(shards, settled), 60*time.Second, 50*time.Millisecond, "the objects of c drain back to it") {
		t.Fatalf("not converged: %s", why)
	}
	assert.Empty(t, w.overlapsSeen(), "no object reconciled by two shards at once")
	assert.Empty(t, w.falseDeletions(), "no move taken for a deletion")
	for _, rp := range reps {
		assert.NoError(t, rp.stop(), "%s: Start returns nil on stop", rp.shard)
	}
}
