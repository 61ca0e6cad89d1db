package cache_bench

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubeloop/kubeloop/bench/fakeapiserver"
)

type kindCase struct {
	name string
	n    func() int
	obj  func() crclient.Object
}

var kinds = []kindCase{
	{"configmaps", func() int { return *nConfigMaps }, func() crclient.Object { return &corev1.ConfigMap{} }},
	{"pods", func() int { return *nPods }, func() crclient.Object { return &corev1.Pod{} }},
	{"secrets", func() int { return *nSecrets }, func() crclient.Object { return &corev1.Secret{} }},
}

// countingHandler counts the objects delivered by an informer and closes
// done when it has seen want of them.
type countingHandler struct {
	n, want int64
	done    chan struct{}
}

func (h *countingHandler) OnAdd(any, bool) {
	if atomic.AddInt64(&h.n, 1) == h.want {
		close(h.done)
	}
}
func (h *countingHandler) OnUpdate(any, any) {}
func (h *countingHandler) OnDelete(any)      {}

var _ toolscache.ResourceEventHandler = (*countingHandler)(nil)

func heapAfterGC() uint64 {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkCacheSync starts a fresh cache of one kind per iteration and
// reports the time until every object has reached an event handler
// ("s/sync", no polling) and the heap it holds afterwards, after GC and
// with the handler removed, per object ("B/object"). Run it with
// -benchtime 1x.
func BenchmarkCacheSync(b *testing.B) {
	for _, k := range kinds {
		for _, im := range ordered() {
			b.Run(fmt.Sprintf("kind=%s/impl=%s", k.name, im.name), func(b *testing.B) {
				n := k.n()
				if n == 0 {
					b.Skip("no objects of this kind")
				}
				var syncs, perObject []float64
				for b.Loop() {
					s, bpo := syncOnce(b, im, k, n)
					syncs = append(syncs, s)
					perObject = append(perObject, bpo)
				}
				b.ReportMetric(mean(syncs), "s/sync")
				b.ReportMetric(mean(perObject), "B/object")
			})
		}
	}
}

func syncOnce(b *testing.B, im impl, k kindCase, n int) (seconds, bytesPerObject float64) {
	b.StopTimer()
	before := heapAfterGC()
	c, err := im.new(server.Config())
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &countingHandler{want: int64(n), done: make(chan struct{})}
	remove, err := c.addHandler(ctx, k.obj(), h)
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	b.StartTimer()
	start := time.Now()
	wg.Go(func() { _ = c.start(ctx) })
	select {
	case <-h.done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("only %d of %d objects after 5 minutes", atomic.LoadInt64(&h.n), n)
	}
	seconds = time.Since(start).Seconds()
	b.StopTimer()
	if !c.waitForCacheSync(ctx) {
		b.Fatal("cache did not sync")
	}
	if err := remove(); err != nil {
		b.Fatal(err)
	}
	after := heapAfterGC()
	runtime.KeepAlive(c)
	cancel()
	wg.Wait()
	b.StartTimer()
	return seconds, (float64(after) - float64(before)) / float64(n)
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// readCaches holds one synced ConfigMap cache per implementation, shared
// by the read benchmarks of one process.
var readCaches sync.Map // impl name -> cacheUnderTest

func readCache(b *testing.B, im impl) cacheUnderTest {
	if c, ok := readCaches.Load(im.name); ok {
		return c.(cacheUnderTest)
	}
	c, err := im.new(server.Config())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	h := &countingHandler{want: int64(*nConfigMaps), done: make(chan struct{})}
	remove, err := c.addHandler(ctx, &corev1.ConfigMap{}, h)
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = c.start(ctx) }() // lives as long as the process
	<-h.done
	if !c.waitForCacheSync(ctx) {
		b.Fatal("cache did not sync")
	}
	if err := remove(); err != nil {
		b.Fatal(err)
	}
	readCaches.Store(im.name, c)
	return c
}

// keys visits the ConfigMaps in a scattered order, so reads are not all
// served from one cache line.
func keys() []types.NamespacedName {
	n := *nConfigMaps
	ks := make([]types.NamespacedName, n)
	for i := range ks {
		j := (i * 7919) % n
		ks[i] = types.NamespacedName{Namespace: fakeapiserver.Namespace(j), Name: "config-" + strconv.Itoa(j)}
	}
	return ks
}

// hotKeys is the working set of the _hot Get cases: the first keys of
// keys(), spread over the namespaces. Their objects stay in the CPU caches,
// as the objects a reconciler has just been handed do; the other Get cases
// visit all the ConfigMaps, so nearly every read misses them.
const hotKeys = 1000

// BenchmarkCacheRead measures reads of a synced cache of ConfigMaps
// (-configmaps, default 100k, in 100 namespaces): Get with and without a
// deep copy, and each library's cheapest read (get_shared: kubeloop's
// client.GetShared, controller-runtime's no-copy Get) (ns/op per read),
// over all the ConfigMaps in a scattered order and over a working set of
// hotKeys of them (_hot); List of one namespace (1k objects at 100k) and
// List of everything, with and without copies (ns/op per List).
func BenchmarkCacheRead(b *testing.B) {
	ks := keys()
	ctx := context.Background()
	cases := []struct {
		name string
		run  func(b *testing.B, c cacheUnderTest)
	}{
		{"get_copy", func(b *testing.B, c cacheUnderTest) { benchGet(b, c, ks, false) }},
		{"get_nocopy", func(b *testing.B, c cacheUnderTest) { benchGet(b, c, ks, true) }},
		{"get_copy_hot", func(b *testing.B, c cacheUnderTest) { benchGet(b, c, ks[:min(hotKeys, len(ks))], false) }},
		{"get_nocopy_hot", func(b *testing.B, c cacheUnderTest) { benchGet(b, c, ks[:min(hotKeys, len(ks))], true) }},
		{"get_shared", func(b *testing.B, c cacheUnderTest) { benchGetShared(b, c, ks) }},
		{"get_shared_hot", func(b *testing.B, c cacheUnderTest) { benchGetShared(b, c, ks[:min(hotKeys, len(ks))]) }},
		{"get_nocopy_parallel", func(b *testing.B, c cacheUnderTest) {
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				var cm corev1.ConfigMap
				i := int(next.Add(1) * 7919)
				for pb.Next() {
					i++
					if err := c.get(ctx, ks[i%len(ks)], &cm, true); err != nil {
						b.Fatal(err)
					}
				}
			})
		}},
		{"list_namespace_copy", func(b *testing.B, c cacheUnderTest) { benchList(b, c, true, false) }},
		{"list_namespace_nocopy", func(b *testing.B, c cacheUnderTest) { benchList(b, c, true, true) }},
		{"list_all_copy", func(b *testing.B, c cacheUnderTest) { benchList(b, c, false, false) }},
		{"list_all_nocopy", func(b *testing.B, c cacheUnderTest) { benchList(b, c, false, true) }},
	}
	for _, tc := range cases {
		for _, im := range ordered() {
			b.Run(fmt.Sprintf("case=%s/impl=%s", tc.name, im.name), func(b *testing.B) {
				c := readCache(b, im)
				b.ReportAllocs()
				b.ResetTimer()
				tc.run(b, c)
			})
		}
	}
}

func benchGet(b *testing.B, c cacheUnderTest, ks []types.NamespacedName, noCopy bool) {
	ctx := context.Background()
	var cm corev1.ConfigMap
	i := 0
	for b.Loop() {
		if err := c.get(ctx, ks[i], &cm, noCopy); err != nil {
			b.Fatal(err)
		}
		if i++; i == len(ks) {
			i = 0
		}
	}
}

// benchGetShared times getShared. Like the other Get cases it does not
// read the object it gets; it checks before the timer starts that every
// key reads the object of that name.
func benchGetShared(b *testing.B, c cacheUnderTest, ks []types.NamespacedName) {
	ctx := context.Background()
	var scratch corev1.ConfigMap
	for _, k := range ks {
		cm, err := c.getShared(ctx, k, &scratch)
		if err != nil {
			b.Fatal(err)
		}
		if cm.Namespace != k.Namespace || cm.Name != k.Name {
			b.Fatalf("read %s, got %s/%s", k, cm.Namespace, cm.Name)
		}
	}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if cm, err := c.getShared(ctx, ks[i], &scratch); err != nil || cm == nil {
			b.Fatal(ks[i], err)
		}
		if i++; i == len(ks) {
			i = 0
		}
	}
}

func benchList(b *testing.B, c cacheUnderTest, inNamespace, noCopy bool) {
	ctx := context.Background()
	want := *nConfigMaps
	if inNamespace {
		want /= fakeapiserver.Namespaces
	}
	i := 0
	for b.Loop() {
		ns := ""
		if inNamespace {
			ns = fakeapiserver.Namespace(i)
			i++
		}
		var l corev1.ConfigMapList
		if err := c.list(ctx, &l, ns, noCopy); err != nil {
			b.Fatal(err)
		}
		if len(l.Items) != want {
			b.Fatalf("listed %d ConfigMaps, want %d", len(l.Items), want)
		}
	}
}
