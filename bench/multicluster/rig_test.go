package multicluster_bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/bench/fakeapiserver"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/multicluster/providers/kubeconfig"
	"github.com/kubeloop/kubeloop/reconcile"
)

// rig is one kubeloop operator over a fleet: the kubeconfig Secrets
// provider on a hub, a Fleet, and one controller that watches the
// ConfigMaps of every cluster with the recorder as its reconciler.
type rig struct {
	fleet *multicluster.Fleet
	ctrl  *controller.Controller
	rec   *recorder
	stop  func() error
}

// startRig starts the operator on hub (whose namespace ns holds the
// Secrets); it returns once the provider and the controller run.
func startRig(tb testing.TB, hub *rest.Config, ns string) *rig {
	tb.Helper()
	p, err := kubeconfig.New(hub, kubeconfig.Options{Namespace: ns, Logger: quiet})
	require.NoError(tb, err)
	f, err := multicluster.NewFleet(multicluster.Options{Provider: p, Logger: quiet})
	require.NoError(tb, err)
	rec := newRecorder(f)
	c, err := controller.NewUnmanaged("fleet-configmaps", controller.Options{
		Reconciler: rec, Logger: quiet, MaxConcurrentReconciles: *workers,
		RateLimiter: controller.PerClusterRateLimiter(nil), FairnessKey: controller.FairByCluster,
	})
	require.NoError(tb, err)
	require.NoError(tb, c.WatchClusters(controller.ClusterWatch{Source: func(cl controller.Cluster) (source.Source, error) {
		return source.Kind(cl.GetCache(), &corev1.ConfigMap{}, &handler.EnqueueRequestForObject{}), nil
	}}))
	require.NoError(tb, f.AddController(c))
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	go func() { errs <- f.Start(ctx) }()
	go func() { errs <- c.Start(ctx) }()
	return &rig{fleet: f, ctrl: c, rec: rec, stop: func() error {
		cancel()
		return errors.Join(<-errs, <-errs)
	}}
}

// recorder is the reconciler: it reads the ConfigMap through the
// cluster's client (from its cache) and records the first reconcile of
// each cluster and the first reconcile that sees each fired seq.
type recorder struct {
	fleet *multicluster.Fleet

	mu     sync.Mutex
	first  map[string]time.Time // cluster -> first reconcile
	seen   map[string]string    // cluster -> last seq seen
	fired  map[string]time.Time // "cluster/seq" -> when it was fired
	lat    map[string][]time.Duration
	notify chan struct{}
}

func newRecorder(f *multicluster.Fleet) *recorder {
	return &recorder{fleet: f, first: map[string]time.Time{}, seen: map[string]string{},
		fired: map[string]time.Time{}, lat: map[string][]time.Duration{}, notify: make(chan struct{}, 1)}
}

func (r *recorder) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	now := time.Now()
	cl, err := r.fleet.GetCluster(ctx, req.Cluster)
	if err != nil {
		return reconcile.Result{}, nil // it left
	}
	var cm corev1.ConfigMap
	if err := cl.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	seq := cm.Data["seq"]
	r.mu.Lock()
	if _, ok := r.first[req.Cluster]; !ok {
		r.first[req.Cluster] = now
	}
	if seq != "" && r.seen[req.Cluster] != seq {
		r.seen[req.Cluster] = seq
		if at, ok := r.fired[req.Cluster+"/"+seq]; ok {
			r.lat[req.Cluster] = append(r.lat[req.Cluster], now.Sub(at))
		}
	}
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
	return reconcile.Result{}, nil
}

// firing records that seq is fired at cluster now.
func (r *recorder) firing(cluster string, seq int64) {
	r.mu.Lock()
	r.fired[fmt.Sprintf("%s/%d", cluster, seq)] = time.Now()
	r.mu.Unlock()
}

// firstOf returns the first reconcile of each cluster of names, and how
// many have none yet.
func (r *recorder) firstOf(names []string) (map[string]time.Time, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]time.Time, len(names))
	missing := 0
	for _, n := range names {
		if at, ok := r.first[n]; ok {
			out[n] = at
		} else {
			missing++
		}
	}
	return out, missing
}

// forget drops what was recorded of cluster name (it left).
func (r *recorder) forget(name string) {
	r.mu.Lock()
	delete(r.first, name)
	delete(r.seen, name)
	delete(r.lat, name)
	r.mu.Unlock()
}

// resetLatencies forgets the latencies recorded so far.
func (r *recorder) resetLatencies() {
	r.mu.Lock()
	r.lat = map[string][]time.Duration{}
	r.mu.Unlock()
}

// latencies returns the event-to-reconcile latencies of every cluster
// but those in except, sorted, and how many events were fired at them.
func (r *recorder) latencies(except ...string) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Duration
	for c, l := range r.lat {
		if !slices.Contains(except, c) {
			out = append(out, l...)
		}
	}
	slices.Sort(out)
	return out
}

// waitFirst waits until every cluster of names has reconciled once.
func (r *recorder) waitFirst(tb testing.TB, names []string, limit time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for {
		if _, missing := r.firstOf(names); missing == 0 {
			return
		}
		require.True(tb, time.Now().Before(deadline), "every cluster reconciles within %v", limit)
		select {
		case <-r.notify:
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitSynced waits until every cluster of names has synced.
func waitSynced(tb testing.TB, f *multicluster.Fleet, names []string, limit time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for _, n := range names {
		for !f.Synced(n) {
			require.True(tb, time.Now().Before(deadline), "cluster %s syncs within %v", n, limit)
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// waitGone waits until the fleet has no cluster of names.
func waitGone(tb testing.TB, f *multicluster.Fleet, names []string, limit time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for {
		left := 0
		for _, n := range f.Clusters() {
			if slices.Contains(names, n) {
				left++
			}
		}
		if left == 0 {
			return
		}
		require.True(tb, time.Now().Before(deadline), "%d clusters still engaged after %v", left, limit)
		time.Sleep(5 * time.Millisecond)
	}
}

// names returns n cluster names from prefix.
func names(prefix string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%05d", prefix, from+i)
	}
	return out
}

// heapAndGoroutines returns the live heap after two collections and the
// number of goroutines.
func heapAndGoroutines() (heap int64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc), runtime.NumGoroutine()
}

// settle waits until the goroutine count stops falling (goroutines of a
// cluster that left end shortly after it is forgotten), at most limit.
func settle(limit time.Duration) {
	deadline := time.Now().Add(limit)
	last := runtime.NumGoroutine()
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		n := runtime.NumGoroutine()
		if n >= last {
			return
		}
		last = n
	}
}

// percentile returns the p-th percentile (0-100) of sorted d.
func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, len(d)*p/100)]
}

// launchFleet starts the fake fleet server for the benchmark.
func launchFleet(tb testing.TB) *fakeapiserver.FleetProcess {
	tb.Helper()
	p, err := fakeapiserver.LaunchFleet(context.Background(), fakeapiserver.FleetConfig{ConfigMaps: *configMaps})
	require.NoError(tb, err)
	tb.Cleanup(p.Stop)
	return p
}

func sortDurations(d []time.Duration) { slices.Sort(d) }

// quiet is a logger that writes nothing (logr.Discard's zero sink would
// make the fleet fall back to its default logger).
var quiet = logr.New(quietSink{})

type quietSink struct{}

func (quietSink) Init(logr.RuntimeInfo)          {}
func (quietSink) Enabled(int) bool               { return false }
func (quietSink) Info(int, string, ...any)       {}
func (quietSink) Error(error, string, ...any)    {}
func (quietSink) WithValues(...any) logr.LogSink { return quietSink{} }
func (quietSink) WithName(string) logr.LogSink   { return quietSink{} }
