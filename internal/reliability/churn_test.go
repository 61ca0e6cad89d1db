package reliability_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/manager"
)

// Loose leak bounds. A leak of one goroutine per cycle would show as 50
// or 200 extra goroutines; the tolerance absorbs the runtime's and the
// shared admin client's own background goroutines coming and going.
const (
	goroutineTolerance = 10
	heapFactor         = 2.0
	heapSlack          = 16 << 20 // bytes
)

// settle returns the goroutine count and live heap once the count is at
// most target, or, with target < 0, once it has stopped falling for a
// second (idle connections closing, timers firing). The 30 s bound is a
// hang bound.
func settle(t *testing.T, target int) (int, uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	n, stable := runtime.NumGoroutine(), 0
	for time.Now().Before(deadline) {
		if target >= 0 && n <= target || target < 0 && stable >= 5 {
			break
		}
		time.Sleep(200 * time.Millisecond)
		runtime.GC()
		m := runtime.NumGoroutine()
		if m >= n {
			stable++
		} else {
			stable = 0
		}
		n = m
	}
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return n, ms.HeapAlloc
}

func TestLifecycleChurn(t *testing.T) {
	ns := newNamespace(t)
	configMaps(t, ns, 3)

	cycle := func() {
		mgr := newManager(t, restConfig, ns, manager.Options{GracefulShutdownTimeout: 10 * time.Second})
		o := newOracle(t, mgr)
		r := start(mgr)
		select {
		case <-mgr.Elected():
		case <-time.After(30 * time.Second): // hang bound
			t.Fatal("manager did not start")
		}
		require.Eventually(t, func() bool {
			o.mu.Lock()
			defer o.mu.Unlock()
			return o.reconciles >= 3
		}, 30*time.Second, 5*time.Millisecond)
		require.NoError(t, r.stop(t))
	}
	cycle() // warm up lazily built process-wide state (codecs, HTTP/2, klog)
	baseG, baseHeap := settle(t, -1)

	const managers = 50
	began := time.Now()
	for i := 0; i < managers; i++ {
		cycle()
	}
	t.Logf("%d manager cycles took %s", managers, time.Since(began))
	afterG, afterHeap := settle(t, baseG+goroutineTolerance)
	t.Logf("manager churn x%d: goroutines %d -> %d, heap %.1f MiB -> %.1f MiB", managers, baseG, afterG, mib(baseHeap), mib(afterHeap))
	assert.LessOrEqual(t, afterG, baseG+goroutineTolerance, "goroutines back to baseline after %d managers", managers)
	assert.LessOrEqual(t, float64(afterHeap), heapFactor*float64(baseHeap)+heapSlack, "heap back near baseline")

	// Informers added and removed on one running manager.
	mgr := newManager(t, restConfig, ns, manager.Options{})
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	<-mgr.Elected()
	ctx := context.Background()
	baseG, baseHeap = settle(t, -1)
	const informers = 200
	began = time.Now()
	defer func() { t.Logf("%d informer cycles took %s", informers, time.Since(began)) }()
	for i := 0; i < informers; i++ {
		obj := kindFor(i)
		inf, err := mgr.GetCache().GetInformer(ctx, obj)
		require.NoError(t, err)
		require.Eventually(t, inf.HasSynced, 30*time.Second, time.Millisecond, "informer %d synced", i)
		require.NoError(t, mgr.GetCache().RemoveInformer(ctx, obj))
	}
	afterG, afterHeap = settle(t, baseG+goroutineTolerance)
	t.Logf("informer churn x%d: goroutines %d -> %d, heap %.1f MiB -> %.1f MiB", informers, baseG, afterG, mib(baseHeap), mib(afterHeap))
	assert.LessOrEqual(t, afterG, baseG+goroutineTolerance, "goroutines back to baseline after %d informers", informers)
	assert.LessOrEqual(t, float64(afterHeap), heapFactor*float64(baseHeap)+heapSlack, "heap back near baseline")
}

// kindFor alternates two kinds so removal and re-creation interleave.
func kindFor(i int) client.Object {
	if i%2 == 0 {
		return &corev1.ConfigMap{}
	}
	return &corev1.Secret{}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
