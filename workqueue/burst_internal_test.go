package workqueue

import (
	"fmt"
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
