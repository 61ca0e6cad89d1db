// Package workqueue_bench compares kubeloop's workqueue with client-go's
// typed rate-limiting queue and controller-runtime's priority queue.
//
//	GOMAXPROCS=2 go test -run '^$' -bench . -benchmem -count 5 | tee new.txt
//	benchstat -col /impl new.txt
package workqueue_bench

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/workqueue"
)

// keys are distinct requests over 100 namespaces; the pool is large enough
// that a cycling producer never catches up with its own earlier keys.
var keys = func() []key {
	ks := make([]key, 1<<21)
	ns := make([]string, 100)
	for i := range ns {
		ns[i] = "namespace-" + strconv.Itoa(i)
	}
	for i := range ks {
		ks[i] = key{NamespacedName: types.NamespacedName{Namespace: ns[i%100], Name: "obj-" + strconv.Itoa(i)}}
	}
	return ks
}()

func endKey(i int) key {
	return key{NamespacedName: types.NamespacedName{Namespace: "end", Name: strconv.Itoa(i)}}
}

type scenario struct {
	name     string
	priority bool // needs priorities
	run      func(b *testing.B, q queue)
}

var scenarios = []scenario{
	{name: "serial", run: serialBatch},
	{name: "pingpong", run: pingPong},
	{name: "unique_p1w1", run: producerConsumer(1, 1, func(i int) key { return keys[i&(len(keys)-1)] })},
	{name: "dup50_p1w1", run: producerConsumer(1, 1, func(i int) key { return keys[(i/2)&(len(keys)-1)] })},
	{name: "dup50_p2w8", run: producerConsumer(2, 8, func(i int) key { return keys[(i/2)&(len(keys)-1)] })},
	{name: "hot100_p1w1", run: producerConsumer(1, 1, func(i int) key { return keys[i%100] })},
	{name: "delayed", run: delayed},
	{name: "ratelimited", run: rateLimited},
	{name: "priority", priority: true, run: priorities},
}

// BenchmarkQueue runs every scenario on every implementation, with and
// without metrics. Compare with: benchstat -col /impl.
func BenchmarkQueue(b *testing.B) {
	for _, sc := range scenarios {
		for _, im := range impls {
			if sc.priority && !im.priority {
				continue
			}
			for _, m := range []bool{false, true} {
				name := fmt.Sprintf("case=%s/impl=%s/metrics=%s", sc.name, im.name, map[bool]string{false: "off", true: "on"}[m])
				b.Run(name, func(b *testing.B) {
					q := onceQueue{queue: im.new(m), once: new(sync.Once)}
					defer q.ShutDown()
					b.ReportAllocs()
					sc.run(b, q)
				})
			}
		}
	}
}

// onceQueue makes ShutDown idempotent (the CR priority queue panics on a
// second call).
type onceQueue struct {
	queue
	once *sync.Once
}

func (q onceQueue) ShutDown() { q.once.Do(q.queue.ShutDown) }

// serialBatch adds 1,000 distinct keys, then gets and finishes each; ns/op
// is per key.
func serialBatch(b *testing.B, q queue) {
	const batch = 1000
	for i := 0; i < b.N; i += batch {
		n := min(batch, b.N-i)
		for j := range n {
			q.Add(keys[j])
		}
		for range n {
			k, _ := q.Get()
			q.Done(k)
		}
	}
}

// pingPong measures the idle handoff: Add, a parked worker wakes, Done,
// and the worker signals back; ns/op is per round trip.
func pingPong(b *testing.B, q queue) {
	back := make(chan struct{})
	go func() {
		for {
			k, shutdown := q.Get()
			if shutdown {
				close(back)
				return
			}
			q.Done(k)
			back <- struct{}{}
		}
	}()
	for i := 0; b.Loop(); i++ {
		q.Add(keys[i&1023])
		<-back
	}
	b.StopTimer()
	q.ShutDown()
	<-back
}

// producerConsumer has p producers add b.N keys in total while w workers
// Get and Done with no work; ns/op is per Add, until the queue is drained.
func producerConsumer(p, w int, keyAt func(i int) key) func(*testing.B, queue) {
	return func(b *testing.B, q queue) {
		run(b, q, w, func() {
			var pg sync.WaitGroup
			per := (b.N + p - 1) / p
			for pi := range p {
				pg.Go(func() {
					for i := pi * per; i < min(b.N, (pi+1)*per); i++ {
						q.Add(keyAt(i))
					}
				})
			}
			pg.Wait()
			for i := range w {
				q.Add(endKey(i))
			}
		})
	}
}

// delayed adds b.N keys with delays of 1-10ms while one worker drains them.
func delayed(b *testing.B, q queue) {
	run(b, q, 1, func() {
		for i := range b.N {
			q.AddAfter(keys[i&(len(keys)-1)], time.Duration(1+i%10)*time.Millisecond)
		}
		q.AddAfter(endKey(0), 20*time.Millisecond)
	})
}

// rateLimited requeues 1,024 keys through the rate limiter and forgets
// them, while one worker drains them.
func rateLimited(b *testing.B, q queue) {
	run(b, q, 1, func() {
		for i := range b.N {
			k := keys[i&1023]
			q.AddRateLimited(k)
			q.Forget(k)
		}
		q.AddAfter(endKey(0), 20*time.Millisecond)
	})
}

// priorities adds 90% low-priority and 10% normal keys from one producer
// to one worker.
func priorities(b *testing.B, q queue) {
	run(b, q, 1, func() {
		for i := range b.N {
			p := workqueue.LowPriority
			if i%10 == 0 {
				p = 0
			}
			q.AddPriority(keys[i&(len(keys)-1)], p)
		}
		q.AddPriority(endKey(0), workqueue.LowPriority-1)
	})
}

// run starts w workers that Get and Done until each sees an end key,
// times produce plus the drain, then stops the workers.
func run(b *testing.B, q queue, w int, produce func()) {
	var wg sync.WaitGroup
	b.ResetTimer()
	for range w {
		wg.Go(func() {
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				q.Done(k)
				if k.Namespace == "end" {
					return
				}
			}
		})
	}
	produce()
	wg.Wait()
	b.StopTimer()
}

// BenchmarkKubeloopMetricsCost splits kubeloop's metrics=on cost into the
// queue's own bookkeeping (provider=noop: clock reads, counts; a
// StatsProvider that never reads), the production provider's
// (provider=prom: the same provider as metrics=on) and a client-go style
// MetricsProvider through workqueue.NewMetricsAdapter (provider=simple:
// Prometheus vectors fed every 500ms).
func BenchmarkKubeloopMetricsCost(b *testing.B) {
	providers := map[string]workqueue.StatsProvider{
		"noop":   noopKubeloopProvider{},
		"prom":   newProductionProvider("bench_cost"),
		"simple": workqueue.NewMetricsAdapter(newPromProvider(prometheus.NewRegistry())),
	}
	for _, sc := range scenarios[:5] {
		for _, pn := range []string{"noop", "prom", "simple"} {
			b.Run(fmt.Sprintf("case=%s/provider=%s", sc.name, pn), func(b *testing.B) {
				q := onceQueue{queue: kubeloopQueue{workqueue.New(workqueue.Options[key]{
					Name: "bench_cost", Metrics: providers[pn],
				})}, once: new(sync.Once)}
				defer q.ShutDown()
				b.ReportAllocs()
				sc.run(b, q)
			})
		}
	}
}

// noopKubeloopProvider is a StatsProvider that never reads.
type noopKubeloopProvider struct{}

func (noopKubeloopProvider) HistogramBuckets() []float64 {
	return prometheus.ExponentialBuckets(10e-9, 10, 12)
}
func (noopKubeloopProvider) RegisterQueue(string, func(*workqueue.Stats)) func() { return func() {} }
