package multicluster_test

import (
	"context"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/reconcile"
)

// TestFleetReconcilesEveryCluster: a controller watching the fleet
// reconciles the objects of both clusters with the right Request.Cluster
// and writes through the client of that cluster.
func TestFleetReconcilesEveryCluster(t *testing.T) {
	p := newProvider()
	f := newFleet(t, p, nil)
	r := &reconciled{fleet: f}
	c := fleetController(t, f, r, controller.Options{})
	require.NoError(t, f.AddController(c))
	east, west := configMap(t, cfgs[0], "a"), configMap(t, cfgs[1], "b")

	stopFleet := testenv.Start(f)
	defer func() { require.NoError(t, stopFleet()) }()
	stopCtrl := testenv.Start(c)
	defer func() { require.NoError(t, stopCtrl()) }()
	p.add(t, "east", cfgs[0])
	p.add(t, "west", cfgs[1])

	eventually(t, func() bool { return dataOf(t, cfgs[0], east) == "east" && dataOf(t, cfgs[1], west) == "west" },
		"each ConfigMap is written through its own cluster's client")
	for _, req := range r.seen() {
		assert.Contains(t, []string{"east", "west"}, req.Cluster)
		assert.True(t, strings.HasSuffix(req.Name, map[string]string{"east": "-a", "west": "-b"}[req.Cluster]),
			"%s names an object of its own cluster", req)
	}
	assert.Equal(t, []string{"east", "west"}, f.Clusters())
	assert.Equal(t, []string{"east", "west"}, c.EngagedClusters())
	eventually(t, func() bool { return f.ReadyCheck(nil) == nil }, "both clusters sync")

	got, err := f.GetCluster(context.Background(), "west")
	require.NoError(t, err)
	assert.Equal(t, "west", got.Name())
	_, err = f.GetCluster(context.Background(), "north")
	assert.ErrorIs(t, err, multicluster.ErrClusterNotFound)
	_, err = f.GetCluster(context.Background(), "")
	assert.ErrorIs(t, err, multicluster.ErrClusterNotFound, "no local cluster given")
}

// TestClusterJoinsAndLeaves: a cluster that joins while the controller
// runs gets its first reconcile; when it leaves, its queued Requests are
// dropped, its metric series go, and the goroutines it started stop.
func TestClusterJoinsAndLeaves(t *testing.T) {
	p := newProvider()
	reg := prometheus.NewRegistry()
	f := newFleet(t, p, reg)
	release := make(chan struct{})
	var releaseOnce sync.Once
	r := &reconciled{fleet: f}
	r.hold = func(req reconcile.Request) {
		if req.Cluster == "joins" && strings.HasSuffix(req.Name, "-held") {
			<-release
		}
	}
	ctrlReg := prometheus.NewRegistry()
	c := fleetController(t, f, r, controller.Options{Metrics: ctrlReg})
	require.NoError(t, f.AddController(c))
	stay := configMap(t, cfgs[0], "stay")
	stopFleet := testenv.Start(f)
	defer func() { require.NoError(t, stopFleet()) }()
	stopCtrl := testenv.Start(c)
	defer func() { require.NoError(t, stopCtrl()) }()
	defer releaseOnce.Do(func() { close(release) }) // before the stops, also on failure
	p.add(t, "stays", cfgs[0])
	eventually(t, func() bool { return dataOf(t, cfgs[0], stay) == "stays" }, "the first cluster reconciles")
	eventually(t, func() bool { return f.Synced("stays") }, "the first cluster syncs")
	base := goleak.IgnoreCurrent()

	joined := configMap(t, cfgs[1], "first")
	p.add(t, "joins", cfgs[1])
	eventually(t, func() bool { return dataOf(t, cfgs[1], joined) == "joins" }, "the joining cluster's first reconcile")
	eventually(t, func() bool { return f.Synced("joins") }, "the joining cluster syncs")
	assert.Equal(t, 1.0, gauge(t, reg, "kubeloop_multicluster_cluster_synced", "joins"))

	// The one worker is held by a reconcile of the joined cluster while
	// three more Requests of it queue up.
	configMap(t, cfgs[1], "held")
	eventually(t, func() bool { return r.saw("joins", "-held") }, "the held reconcile started")
	for _, n := range []string{"q1", "q2", "q3"} {
		configMap(t, cfgs[1], n)
	}
	eventually(t, func() bool { return gauge(t, ctrlReg, "workqueue_depth", c.ControllerName()) >= 3 }, "the Requests queue behind the held one")
	p.remove("joins")
	eventually(t, func() bool { return len(c.EngagedClusters()) == 1 && len(f.Clusters()) == 1 }, "the cluster left")
	releaseOnce.Do(func() { close(release) })
	late := configMap(t, cfgs[0], "late")
	eventually(t, func() bool { return dataOf(t, cfgs[0], late) == "stays" }, "the staying cluster still reconciles")
	for _, n := range []string{"-q1", "-q2", "-q3"} {
		assert.False(t, r.saw("joins", n), "queued Request %s of the cluster that left was dropped", n)
	}
	assert.Equal(t, -1.0, gauge(t, reg, "kubeloop_multicluster_cluster_synced", "joins"), "its series is gone")
	assert.Equal(t, 1.0, gauge(t, reg, "kubeloop_multicluster_cluster_synced", "stays"))
	assert.NoError(t, goleak.Find(append(testenv.SharedLeakIgnores(), base)...), "the cluster's goroutines stopped")
}

// gauge returns the value of the series of name with a label of value
// label, or -1 when there is none.
func gauge(t *testing.T, reg prometheus.Gatherer, name, label string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetValue() == label {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

// TestUnreachableClusterDelaysNoOther: a blackholed cluster and one whose
// address refuses connections are engaged first; a healthy cluster engaged
// after them reconciles while they have not synced, and the readiness
// check names them, not it.
func TestUnreachableClusterDelaysNoOther(t *testing.T) {
	proxy, err := faultproxy.New(cfgs[2])
	require.NoError(t, err)
	defer func() { _ = proxy.Close() }()
	proxy.Blackhole(true)
	refused := rest.CopyConfig(cfgs[2])
	refused.Host = "https://" + closedAddr(t)

	p := newProvider()
	f := newFleet(t, p, nil)
	r := &reconciled{fleet: f}
	c := fleetController(t, f, r, controller.Options{})
	require.NoError(t, f.AddController(c))
	healthy := configMap(t, cfgs[0], "healthy")
	stopFleet := testenv.Start(f)
	defer func() { require.NoError(t, stopFleet()) }()
	stopCtrl := testenv.Start(c)
	defer func() { require.NoError(t, stopCtrl()) }()

	p.add(t, "blackholed", proxy.Config())
	p.add(t, "refused", refused)
	p.add(t, "healthy", cfgs[0])
	eventually(t, func() bool { return dataOf(t, cfgs[0], healthy) == "healthy" }, "the healthy cluster reconciles")
	assert.False(t, f.Synced("blackholed"))
	assert.False(t, f.Synced("refused"))
	eventually(t, func() bool { return f.Synced("healthy") }, "the healthy cluster syncs")
	err = f.ReadyCheck(nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `cluster "blackholed"`)
	assert.Contains(t, err.Error(), `cluster "refused"`)
	assert.NotContains(t, err.Error(), `cluster "healthy"`)
	p.remove("blackholed")
	p.remove("refused")
	eventually(t, func() bool { return len(f.Clusters()) == 1 }, "unreachable clusters leave too")
	assert.NoError(t, f.ReadyCheck(nil))
	p.remove("healthy")
	eventually(t, func() bool { return len(f.Clusters()) == 0 }, "the healthy cluster leaves")
	// The proxy still blackholes: a request the cluster left hanging
	// would hang on. Closing the cluster's connections ends it.
	var left []string
	eventually(t, func() bool { left = clusterGoroutines(); return len(left) == 0 },
		"nothing of the clusters (the blackholed one's hanging discovery) outlives them")
	assert.Empty(t, left)
}

// clusterGoroutines returns the stacks of goroutines of a cluster's
// client side: its engagement, cache, informers, mapper and discovery.
func clusterGoroutines() []string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, mark := range []string{"multicluster.(*engagement)", "cache/internal/informer.", "apiutil.(*dynamicRESTMapper)", "discovery.(*DiscoveryClient)"} {
			if strings.Contains(g, mark) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestFieldIndexOnEveryCluster: an index registered before a cluster
// joined and one registered after both work in both clusters.
func TestFieldIndexOnEveryCluster(t *testing.T) {
	p := newProvider()
	f := newFleet(t, p, nil)
	stopFleet := testenv.Start(f)
	defer func() { require.NoError(t, stopFleet()) }()
	byName := func(o client.Object) []string { return []string{o.GetName()} }
	byLabel := func(o client.Object) []string { return []string{o.GetLabels()["test"]} }
	ctx := context.Background()
	require.NoError(t, f.IndexField(ctx, &corev1.ConfigMap{}, "byName", byName))
	a := configMap(t, cfgs[0], "a")
	p.add(t, "early", cfgs[0])
	eventually(t, func() bool { return f.Synced("early") }, "early syncs")
	require.NoError(t, f.IndexField(ctx, &corev1.ConfigMap{}, "byLabel", byLabel), "added while a cluster runs")
	b := configMap(t, cfgs[1], "b")
	p.add(t, "later", cfgs[1])
	eventually(t, func() bool { return f.Synced("later") }, "later syncs")

	for name, cm := range map[string]*corev1.ConfigMap{"early": a, "later": b} {
		cl, err := f.GetCluster(ctx, name)
		require.NoError(t, err)
		for field, value := range map[string]string{"byName": cm.Name, "byLabel": testLabel(t)} {
			var list corev1.ConfigMapList
			eventually(t, func() bool {
				return cl.GetClient().List(ctx, &list, client.MatchingFields{field: value}) == nil && len(list.Items) == 1
			}, "cluster %s, index %s", name, field)
			assert.Equal(t, cm.Name, list.Items[0].Name)
		}
	}
	assert.Error(t, f.IndexField(ctx, nil, "x", byName))
}

// TestLateControllerMissesNoInitialListEvent: a controller added after a
// cluster's cache has started and synced still reconciles every object the
// cache listed before it came.
func TestLateControllerMissesNoInitialListEvent(t *testing.T) {
	p := newProvider()
	f := newFleet(t, p, nil)
	var cms []*corev1.ConfigMap
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		cms = append(cms, configMap(t, cfgs[1], n))
	}
	stopFleet := testenv.Start(f)
	defer func() { require.NoError(t, stopFleet()) }()
	p.add(t, "east", cfgs[1])
	eventually(t, func() bool { return f.Synced("east") }, "the cluster syncs")
	// An informer of the kind exists and has listed before the controller.
	cl, err := f.GetCluster(context.Background(), "east")
	require.NoError(t, err)
	var list corev1.ConfigMapList
	require.NoError(t, cl.GetClient().List(context.Background(), &list))

	r := &reconciled{fleet: f}
	c := fleetController(t, f, r, controller.Options{})
	stopCtrl := testenv.Start(c)
	defer func() { require.NoError(t, stopCtrl()) }()
	require.NoError(t, f.AddController(c))
	eventually(t, func() bool {
		for _, cm := range cms {
			if dataOf(t, cfgs[1], cm) != "east" {
				return false
			}
		}
		return true
	}, "every object listed before the controller came is reconciled")
}

// TestEngageAgainReplaces: engaging an engaged name (new credentials, a
// new address) ends the old engagement first; the name then serves the
// new cluster only. Engage refuses a bad name, a nil config, and any
// call once the fleet stopped.
func TestEngageAgainReplaces(t *testing.T) {
	p := newProvider()
	f := newFleet(t, p, nil)
	r := &reconciled{fleet: f}
	c := fleetController(t, f, r, controller.Options{})
	require.NoError(t, f.AddController(c))
	first, second := configMap(t, cfgs[0], "first"), configMap(t, cfgs[1], "second")
	stopFleet := testenv.Start(f)
	stopCtrl := testenv.Start(c)
	defer func() { require.NoError(t, stopCtrl()) }()
	p.add(t, "moving", cfgs[0])
	eventually(t, func() bool { return dataOf(t, cfgs[0], first) == "moving" }, "the first config's cluster reconciles")
	p.add(t, "moving", cfgs[1])
	eventually(t, func() bool { return dataOf(t, cfgs[1], second) == "moving" }, "the second config's cluster reconciles")
	assert.Equal(t, []string{"moving"}, f.Clusters())
	assert.Equal(t, []string{"moving"}, c.EngagedClusters())
	later := configMap(t, cfgs[0], "later")
	late := configMap(t, cfgs[1], "late")
	eventually(t, func() bool { return dataOf(t, cfgs[1], late) == "moving" }, "the new engagement serves")
	assert.Equal(t, "", dataOf(t, cfgs[0], later), "the old engagement ended")

	assert.ErrorIs(t, f.Engage(context.Background(), "", cfgs[0]), multicluster.ErrInvalidName)
	assert.ErrorContains(t, f.Engage(context.Background(), "x", nil), `cluster "x": nil rest.Config`)
	require.NoError(t, stopFleet())
	assert.ErrorIs(t, f.Engage(context.Background(), "after", cfgs[0]), multicluster.ErrNotStarted)
	assert.Empty(t, f.Clusters(), "stopping the fleet disengages every cluster")
}
