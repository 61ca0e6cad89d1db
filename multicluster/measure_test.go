package multicluster_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/reconcile"
)

// BenchmarkEngageIdleClusters engages 100 clusters, all names for one real
// control plane, each with its own HTTP transport (a Proxy func keeps
// client-go from sharing one, as separate clusters would not), and one
// controller watching one kind (the test's labelled ConfigMaps: one
// object). It reports the engage latency (Engage called to the cluster's
// first reconcile), the heap and goroutines per engaged idle cluster, and
// what is left once every cluster has left (and how many of the Cluster
// objects the garbage collector took). Run it with -benchtime=1x.
func BenchmarkEngageIdleClusters(b *testing.B) {
	const n = 100
	for range b.N {
		measureIdleClusters(b, n)
	}
}

func measureIdleClusters(b *testing.B, n int) {
	p := newProvider()
	f := newFleet(b, p, nil)
	configMap(b, cfgs[0], "one")
	var mu sync.Mutex
	first := map[string]time.Time{}
	r := reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		mu.Lock()
		if _, ok := first[req.Cluster]; !ok {
			first[req.Cluster] = time.Now()
		}
		mu.Unlock()
		return reconcile.Result{}, nil
	})
	c := fleetController(b, f, r, controller.Options{MaxConcurrentReconciles: 4})
	require.NoError(b, f.AddController(c))
	stopFleet := testenv.Start(f)
	stopCtrl := testenv.Start(c)
	<-p.ready

	heap0, gor0 := heapAndGoroutines()
	engaged := map[string]time.Time{}
	start := time.Now()
	for i := range n {
		name := fmt.Sprintf("c%04d", i)
		cfg := rest.CopyConfig(cfgs[0])
		cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil } // its own transport
		engaged[name] = time.Now()
		p.add(b, name, cfg)
	}
	for {
		mu.Lock()
		done := len(first) == n
		mu.Unlock()
		if done {
			break
		}
		require.Less(b, time.Since(start), 2*time.Minute, "every cluster reconciles")
		time.Sleep(10 * time.Millisecond)
	}
	all := time.Since(start)
	var collected atomic.Int64
	for i := range n {
		cl, err := f.GetCluster(context.Background(), fmt.Sprintf("c%04d", i))
		require.NoError(b, err)
		runtime.AddCleanup(cl, func(struct{}) { collected.Add(1) }, struct{}{})
	}
	for !allSynced(f, n) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second) // idle
	heap1, gor1 := heapAndGoroutines()

	var lat []time.Duration
	for name, at := range first {
		lat = append(lat, at.Sub(engaged[name]))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "engage-p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Milliseconds()), "engage-p99-ms")
	b.ReportMetric(all.Seconds(), "all-reconciled-s")
	b.ReportMetric(float64(heap1-heap0)/float64(n)/1024, "heap-KiB/cluster")
	b.ReportMetric(float64(gor1-gor0)/float64(n), "goroutines/cluster")

	for i := range n {
		p.remove(fmt.Sprintf("c%04d", i))
	}
	for len(f.Clusters()) > 0 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second)
	heap2, gor2 := heapAndGoroutines()
	time.Sleep(100 * time.Millisecond)
	runtime.GC()
	time.Sleep(100 * time.Millisecond)
	b.ReportMetric(float64(collected.Load()), "clusters-collected")
	b.ReportMetric(float64(heap2-heap0)/1024, "heap-left-KiB")
	b.ReportMetric(float64(gor2-gor0), "goroutines-left")
	require.NoError(b, stopCtrl())
	require.NoError(b, stopFleet())
}

func allSynced(f interface{ Synced(string) bool }, n int) bool {
	for i := range n {
		if !f.Synced(fmt.Sprintf("c%04d", i)) {
			return false
		}
	}
	return true
}

func heapAndGoroutines() (heap int64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc), runtime.NumGoroutine()
}
