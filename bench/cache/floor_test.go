package cache_bench

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	klclient "github.com/kubeloop/kubeloop/client"
)

// BenchmarkStoreFloor splits a no-copy Get of BenchmarkCacheRead into its
// parts, on kubeloop's synced ConfigMap cache and in the same scattered key
// order (ns/op per read; each case fills the same typed ConfigMap):
//
//   - get_shared: kubeloop's client.GetShared, which returns the cached
//     object without copying.
//   - get: kubeloop's Get with UnsafeDisableDeepCopy (get_shared plus the
//     struct copy).
//   - nsname_map: one Go map of all the objects keyed by the namespace
//     and name strings themselves under a RWMutex, then the struct copy: a
//     bare lookup for comparison (the store keeps one table per namespace).
//   - nsname_map_ptr: the same lookup without the struct copy.
//   - copy_only: the struct copy alone, from pointers found beforehand.
//
// The store's table of objects by name is a hand-written hash table
// (cache/internal/store/table.go); built with -tags kubeloop_maptable it is
// a plain Go map instead, so running this benchmark with and without the
// tag shows what the table buys on get and get_shared.
//
// cpu-ns/op is the benchmark goroutine's own CPU time per read (it is
// locked to its thread), which other processes on a shared machine disturb
// less than ns/op. It is not part of make bench; it shows where a Get's
// time goes.
func BenchmarkStoreFloor(b *testing.B) {
	ks := keys()
	c := readCache(b, impls[0]).(kubeloopCache)
	ctx := context.Background()
	type nsName struct{ ns, name string }
	byName := make(map[nsName]any, len(ks))
	ptrs := make([]*corev1.ConfigMap, len(ks))
	for i, k := range ks {
		obj, err := klclient.GetShared[*corev1.ConfigMap](ctx, c.c, k)
		if err != nil {
			b.Fatalf("%s: %v", k, err)
		}
		byName[nsName{obj.Namespace, obj.Name}] = obj
		ptrs[i] = obj
	}
	var sink *corev1.ConfigMap
	var mu sync.RWMutex
	var cm corev1.ConfigMap
	cases := []struct {
		name string
		read func(i int)
	}{
		{"nsname_map", func(i int) {
			mu.RLock()
			obj := byName[nsName{ks[i].Namespace, ks[i].Name}]
			mu.RUnlock()
			cm = *obj.(*corev1.ConfigMap)
		}},
		{"nsname_map_ptr", func(i int) {
			mu.RLock()
			obj := byName[nsName{ks[i].Namespace, ks[i].Name}]
			mu.RUnlock()
			sink = obj.(*corev1.ConfigMap)
		}},
		{"copy_only", func(i int) {
			cm = *ptrs[i]
		}},
		{"get_shared", func(i int) {
			var err error
			if sink, err = klclient.GetShared[*corev1.ConfigMap](ctx, c.c, ks[i]); err != nil {
				b.Fatal(err)
			}
		}},
		{"get", func(i int) {
			if err := c.get(ctx, ks[i], &cm, true); err != nil {
				b.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		b.Run("case="+tc.name, func(b *testing.B) {
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU(b)
			i := 0
			for b.Loop() {
				tc.read(i)
				if i++; i == len(ks) {
					i = 0
				}
			}
			b.ReportMetric(float64(threadCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
	_ = cm
	_ = sink
}

// threadCPU returns the CPU time of the calling thread.
func threadCPU(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ts.Nano())
}
