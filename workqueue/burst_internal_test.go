package workqueue

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// nsName is a key shaped like reconcile.Request.
type nsName struct{ Namespace, Name string }

// BenchmarkBurstDrain is a controller's cold start in its queue: 100k
// keys added at once (the initial list), then Get and Done of each by one
// worker, with metrics. It reports the cost per key of either phase.
func BenchmarkBurstDrain(b *testing.B) {
	keys := make([]nsName, 100_000)
	for i := range keys {
		keys[i] = nsName{fmt.Sprint("namespace-", i%100), fmt.Sprint("config-", i)}
	}
	for _, expect := range []bool{false, true} {
		b.Run(fmt.Sprintf("expect=%v", expect), func(b *testing.B) {
			var add, drain time.Duration
			for b.Loop() {
				q := New(Options[nsName]{Metrics: nopProvider{}})
				t0 := time.Now()
				if expect {
					q.Expect(len(keys))
				}
				for _, k := range keys {
					q.AddWithOpts(AddOpts{Priority: LowPriority}, k)
				}
				t1 := time.Now()
				for range keys {
					k, _ := q.Get()
					q.Done(k)
				}
				drain += time.Since(t1)
				add += t1.Sub(t0)
				q.ShutDown()
			}
			n := float64(b.N * len(keys))
			b.ReportMetric(float64(add.Nanoseconds())/n, "add-ns/key")
			b.ReportMetric(float64(drain.Nanoseconds())/n, "drain-ns/key")
		})
	}
}

// BenchmarkParallelDrain drains a backlog of 100k keys with two workers,
// each taking a key and handing it back with Get and Done, or with
// DoneAndGet (the controller's loop): what one lock acquisition per key
// instead of two buys when the lock's cache line moves between cores.
func BenchmarkParallelDrain(b *testing.B) {
	keys := make([]nsName, 100_000)
	for i := range keys {
		keys[i] = nsName{fmt.Sprint("namespace-", i%100), fmt.Sprint("config-", i)}
	}
	for _, fused := range []bool{false, true} {
		b.Run(fmt.Sprintf("fused=%v", fused), func(b *testing.B) {
			var drain time.Duration
			for b.Loop() {
				q := New(Options[nsName]{Metrics: nopProvider{}})
				q.Expect(len(keys))
				for _, k := range keys {
					q.AddWithOpts(AddOpts{Priority: LowPriority}, k)
				}
				var left atomic.Int64
				left.Store(int64(len(keys)))
				t0 := time.Now()
				var wg sync.WaitGroup
				for range 2 {
					wg.Go(func() {
						var k nsName
						held := false
						for left.Add(-1) >= 0 { // one more key to take
							switch {
							case !held:
								k, _ = q.Get()
								held = true
							case fused:
								k, _ = q.DoneAndGet(k)
							default:
								q.Done(k)
								k, _ = q.Get()
							}
						}
						if held {
							q.Done(k)
						}
					})
				}
				wg.Wait()
				drain += time.Since(t0)
				q.ShutDown()
			}
			b.ReportMetric(float64(drain.Nanoseconds())/float64(b.N*len(keys)), "drain-ns/key")
		})
	}
}
