package multicluster_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding"
)

// Short Leases keep the tests quick; the protocol does not depend on them.
const (
	testLease   = 3 * time.Second
	testRenew   = 2 * time.Second
	testRetry   = 500 * time.Millisecond
	testTimeout = 60 * time.Second
)

// interval is one reconcile as the witness saw it.
type interval struct {
	cluster, replica string
	start, end       time.Time
}

// witness records every reconcile of every replica, from outside them.
type witness struct {
	mu   sync.Mutex
	runs []interval
	open map[string]int // cluster -> reconciles running now, any replica
	by   map[string]map[string]bool
	bad  []string
}

func newWitness() *witness {
	return &witness{open: map[string]int{}, by: map[string]map[string]bool{}}
}

// wrap returns inner recorded as replica's.
func (w *witness) wrap(replica string, inner reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		start := time.Now()
		w.mu.Lock()
		if w.by[req.Cluster] == nil {
			w.by[req.Cluster] = map[string]bool{}
		}
		for other, n := range w.runningLocked(req.Cluster) {
			if other != replica && n > 0 {
				w.bad = append(w.bad, fmt.Sprintf("cluster %q: %s started while %s reconciled it", req.Cluster, replica, other))
			}
		}
		w.by[req.Cluster][replica] = true
		w.open[req.Cluster+"\x00"+replica]++
		w.mu.Unlock()
		defer func() {
			w.mu.Lock()
			w.open[req.Cluster+"\x00"+replica]--
			w.runs = append(w.runs, interval{req.Cluster, replica, start, time.Now()})
			w.mu.Unlock()
		}()
		return inner.Reconcile(ctx, req)
	})
}

// runningLocked returns, per replica, the reconciles of cluster running.
func (w *witness) runningLocked(cluster string) map[string]int {
	out := map[string]int{}
	for k, n := range w.open {
		c, r, _ := strings.Cut(k, "\x00")
		if c == cluster {
			out[r] += n
		}
	}
	return out
}

// overlaps returns every pair of reconciles of one cluster by two
// replicas whose intervals overlap, and the overlaps seen at a start.
func (w *witness) overlaps() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := slices.Clone(w.bad)
	byCluster := map[string][]interval{}
	for _, r := range w.runs {
		byCluster[r.cluster] = append(byCluster[r.cluster], r)
	}
	for c, runs := range byCluster {
		sort.Slice(runs, func(i, j int) bool { return runs[i].start.Before(runs[j].start) })
		for i := range runs {
			for j := i + 1; j < len(runs) && runs[j].start.Before(runs[i].end); j++ {
				if runs[j].replica != runs[i].replica {
					out = append(out, fmt.Sprintf("cluster %q: %s [%s, %s] and %s [%s, %s]", c,
						runs[i].replica, runs[i].start.Format(time.StampMicro), runs[i].end.Format(time.StampMicro),
						runs[j].replica, runs[j].start.Format(time.StampMicro), runs[j].end.Format(time.StampMicro)))
				}
			}
		}
	}
	return out
}

// lastBy returns when replica last reconciled cluster, and whether it did.
func (w *witness) lastBy(cluster, replica string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, r := range w.runs {
		if r.cluster == cluster && r.replica == replica && r.end.After(last) {
			last = r.end
		}
	}
	return last, !last.IsZero()
}

// firstBy returns when replica first reconciled cluster after since.
func (w *witness) firstBy(cluster, replica string, since time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var first time.Time
	for _, r := range w.runs {
		if r.cluster == cluster && r.replica == replica && r.start.After(since) && (first.IsZero() || r.start.Before(first)) {
			first = r.start
		}
	}
	return first, !first.IsZero()
}

// member is one cluster of the sharded tests' fleet: a name and the
// plane it points at; its ConfigMap carries its name in the label
// "cluster", so each cluster's watch sees only its own object.
type member struct {
	name string
	cfg  *rest.Config
}

// shardedFleet creates n clusters on the member planes (cfgs[1] and
// cfgs[2]), each with one ConfigMap of the test.
func shardedFleet(t *testing.T, n int) []member {
	t.Helper()
	out := make([]member, n)
	for i := range out {
		out[i] = member{name: fmt.Sprintf("c%02d", i), cfg: cfgs[1+i%2]}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: testLabel(t) + "-" + out[i].name,
			Labels: map[string]string{"test": testLabel(t), "cluster": out[i].name}}}
		require.NoError(t, direct(t, out[i].cfg).Create(context.Background(), cm))
		t.Cleanup(func() { _ = direct(t, out[i].cfg).Delete(context.Background(), cm) })
	}
	return out
}

// replica is one replica of the sharded tests: a ring on the hub plane
// (cfgs[0], possibly through a proxy), a fleet whose Provider is the
// placement of a provider of every member, and a controller behind the
// placement's gate that reconciles each cluster's ConfigMap, continuously
// (each reconcile requeues itself).
type replica struct {
	name    string
	ring    *sharding.Ring
	sharded *multicluster.Sharded
	fleet   *multicluster.Fleet
	ctrl    *controller.Controller
	cancel  context.CancelFunc
	done    sync.WaitGroup
	started time.Time
	reg     *prometheus.Registry
}

// metric returns the value of the sharded fleet's metric name.
func (r *replica) metric(t *testing.T, name string) float64 {
	t.Helper()
	mfs, err := r.reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

func newReplica(t *testing.T, ringName, name string, hub *rest.Config, members []member, w *witness) *replica {
	t.Helper()
	hubClient, err := client.New(hub, client.Options{})
	require.NoError(t, err)
	ring, err := sharding.New(hubClient, sharding.Options{Ring: ringName, Shard: name, Clusters: true, Namespace: "default",
		LeaseDuration: testLease, RenewDeadline: testRenew, RetryPeriod: testRetry,
		Webhook: sharding.WebhookOptions{Disabled: true}, Logger: testenv.Logger()})
	require.NoError(t, err)
	p := newProvider()
	reg := prometheus.NewRegistry()
	sh, err := multicluster.NewSharded(p, ring, multicluster.ShardedOptions{Logger: testenv.Logger(), Metrics: reg})
	require.NoError(t, err)
	f := newFleet(t, sh, nil)
	inner := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		cl, err := f.GetCluster(ctx, req.Cluster)
		if err != nil {
			return reconcile.Result{}, err
		}
		var cm corev1.ConfigMap
		if err := cl.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		time.Sleep(2 * time.Millisecond)
		return reconcile.Result{RequeueAfter: 50 * time.Millisecond}, nil
	})
	gated, err := sh.Reconciler(w.wrap(name, inner))
	require.NoError(t, err)
	c, err := controller.NewUnmanaged(testLabel(t)+"-"+name, controller.Options{Reconciler: gated, Logger: testenv.Logger(),
		RateLimiter: controller.PerClusterRateLimiter(nil), MaxConcurrentReconciles: 4})
	require.NoError(t, err)
	label := testLabel(t)
	require.NoError(t, c.WatchClusters(controller.ClusterWatch{Source: func(cl controller.Cluster) (source.Source, error) {
		own := predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetLabels()["test"] == label && o.GetLabels()["cluster"] == cl.Name()
		})
		return source.Kind(cl.GetCache(), &corev1.ConfigMap{}, &handler.EnqueueRequestForObject{}, own), nil
	}}))
	require.NoError(t, f.AddController(c))
	r := &replica{name: name, ring: ring, sharded: sh, fleet: f, ctrl: c, reg: reg}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.started = time.Now()
	for _, run := range []func(context.Context) error{ring.Start, f.Start, c.Start} {
		r.done.Go(func() { assert.NoError(t, run(ctx)) })
	}
	for _, m := range members {
		p.add(t, m.name, m.cfg)
	}
	return r
}

// stop stops the replica as a manager stops: every part at once.
func (r *replica) stop() {
	r.cancel()
	r.done.Wait()
}

// partitioned reports whether the replicas hold every member between
// them, each on exactly one, and one of them holds the manager's own
// cluster.
func partitioned(rs []*replica, members []member) bool {
	seen := map[string]int{}
	local := 0
	for _, r := range rs {
		for _, c := range r.sharded.Held() {
			seen[c]++
		}
		if r.sharded.HoldsLocal() {
			local++
		}
	}
	if len(seen) != len(members) || local != 1 {
		return false
	}
	for _, m := range members {
		if seen[m.name] != 1 {
			return false
		}
	}
	return true
}

func holders(rs []*replica) map[string]string {
	out := map[string]string{}
	for _, r := range rs {
		for _, c := range r.sharded.Held() {
			out[c] = r.name
		}
	}
	return out
}

// TestShardedClusters: replicas split the clusters with each engaged and
// reconciled on exactly one; a joining replica takes its share through
// the drain handshake, without waiting for any Lease; a replica that stops
// hands its clusters over after draining them; one cut from the hub (its
// Lease stops being renewed: a killed process, as the others see it) has
// its clusters taken over once its Lease expired, and when it comes back
// it takes a share again. A witness outside the replicas records every
// reconcile and sees no cluster reconciled by two replicas at once.
func TestShardedClusters(t *testing.T) {
	ringName := fmt.Sprintf("mc-sharded-%d", time.Now().UnixNano()%1_000_000) // a new ring for each run
	members := shardedFleet(t, 12)
	w := newWitness()
	proxy, err := faultproxy.New(cfgs[0])
	require.NoError(t, err)
	defer func() { _ = proxy.Close() }()

	r1 := newReplica(t, ringName, "r1", cfgs[0], members, w)
	defer r1.stop()
	r2 := newReplica(t, ringName, "r2", proxy.Config(), members, w)
	defer r2.stop()
	require.Eventually(t, func() bool {
		return partitioned([]*replica{r1, r2}, members) && len(r1.sharded.Held()) > 0 && len(r2.sharded.Held()) > 0
	}, testTimeout, 20*time.Millisecond, "two replicas split the clusters")
	t.Logf("two replicas: %d and %d clusters, %s after the start", len(r1.sharded.Held()), len(r2.sharded.Held()),
		time.Since(r1.started).Round(time.Millisecond))
	for _, m := range members {
		require.Eventually(t, func() bool {
			h := holders([]*replica{r1, r2})[m.name]
			_, ok := w.firstBy(m.name, h, time.Time{})
			return ok
		}, testTimeout, 20*time.Millisecond, "cluster %s is reconciled by its holder", m.name)
	}
	for _, r := range []*replica{r1, r2} {
		assert.ElementsMatch(t, r.sharded.Held(), r.fleet.Clusters(), "%s engages exactly the clusters it holds", r.name)
		assert.Equal(t, float64(len(r.sharded.Held())), r.metric(t, "kubeloop_multicluster_sharded_held_clusters"))
		assert.Equal(t, float64(len(r.sharded.Held())), r.metric(t, "kubeloop_multicluster_sharded_placed_clusters"))
	}

	// A third replica joins: it takes its share while every Lease stays valid.
	before := holders([]*replica{r1, r2})
	drainsBefore := r1.metric(t, "kubeloop_multicluster_sharded_drains_total") + r2.metric(t, "kubeloop_multicluster_sharded_drains_total")
	r3 := newReplica(t, ringName, "r3", cfgs[0], members, w)
	defer r3.stop()
	all := []*replica{r1, r2, r3}
	require.Eventually(t, func() bool { return partitioned(all, members) && len(r3.sharded.Held()) > 0 }, testTimeout,
		20*time.Millisecond, "the joiner takes a share")
	joined := time.Since(r3.started)
	t.Logf("join: r3 holds %d clusters %s after it started (LeaseDuration %s)", len(r3.sharded.Held()),
		joined.Round(time.Millisecond), testLease)
	after := holders(all)
	moved := 0
	for c, h := range after {
		if before[c] == h {
			continue
		}
		moved++
		// The old owner's last reconcile ended before the new owner's
		// first began (bounded loads may move a cluster between the old
		// replicas too).
		last, _ := w.lastBy(c, before[c])
		require.Eventually(t, func() bool { _, ok := w.firstBy(c, h, r3.started); return ok }, testTimeout,
			20*time.Millisecond, "cluster %s is reconciled by its new holder %s", c, h)
		first, _ := w.firstBy(c, h, r3.started)
		assert.False(t, first.Before(last), "cluster %s: %s started before %s's last reconcile ended", c, h, before[c])
	}
	assert.NotZero(t, moved)
	t.Logf("join: %d of %d clusters moved", moved, len(members))
	assert.Equal(t, float64(moved), r1.metric(t, "kubeloop_multicluster_sharded_drains_total")+r2.metric(t, "kubeloop_multicluster_sharded_drains_total")-drainsBefore,
		"each moved cluster was drained once by its old owner")

	// r1 stops: its clusters move after it drained them.
	left := time.Now()
	r1.stop()
	rest := []*replica{r2, r3}
	require.Eventually(t, func() bool { return partitioned(rest, members) }, testTimeout, 20*time.Millisecond,
		"r1's clusters move to the others")
	t.Logf("leave: the others hold every cluster %s after r1 was stopped", time.Since(left).Round(time.Millisecond))

	// r2 is cut from the hub: its Lease stops being renewed.
	cut := time.Now()
	proxy.Blackhole(true)
	require.Eventually(t, func() bool { return partitioned([]*replica{r3}, members) }, testTimeout, 20*time.Millisecond,
		"r3 takes over every cluster once r2's Lease expired")
	failover := time.Since(cut)
	t.Logf("failover: r3 holds every cluster %s after r2 was cut (LeaseDuration %s)", failover.Round(time.Millisecond), testLease)
	_, admitting := r2.ring.Term()
	assert.False(t, admitting, "r2 is fenced")

	// r2 comes back: it rejoins and takes a share again, through drains.
	proxy.Blackhole(false)
	require.Eventually(t, func() bool { return partitioned(rest, members) && len(r2.sharded.Held()) > 0 }, testTimeout,
		20*time.Millisecond, "r2 rejoins and takes a share")

	assert.Empty(t, w.overlaps(), "no cluster is reconciled by two replicas at once")
	w.mu.Lock()
	t.Logf("witness: %d reconciles", len(w.runs))
	w.mu.Unlock()
	r2.stop()
	r3.stop()
	settleMappers(t)
}

// settleMappers waits until no REST mapping started by a cluster's cache
// is still running: a cluster that left while its cache's first discovery
// was on the wire (the tests move clusters within a second of engaging
// them) has its connections closed, and client-go retries the discovery
// request in the background for a few seconds (see
// cache/internal/listwatch.RESTMapping).
func settleMappers(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		buf := make([]byte, 1<<22)
		return !strings.Contains(string(buf[:runtime.Stack(buf, true)]), "listwatch.RESTMapping.func1")
	}, testTimeout, 100*time.Millisecond, "the REST mappings of the clusters that left finish")
}
