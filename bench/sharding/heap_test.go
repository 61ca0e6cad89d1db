package sharding_bench

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkShardedHeap: every replica of a ring is a separate OS process
// (this binary as a child) that syncs its cache, reconciles its share and
// reports its live heap (HeapAlloc after two forced GCs). replicas=empty
// is one replica whose share is empty (ring "empty"): the part of a
// replica's heap that does not depend on its objects. Run with
// -benchtime 1x.
func BenchmarkShardedHeap(b *testing.B) {
	prepare(b)
	cases := []struct {
		name string
		ring string
		n    int
	}{{"replicas=empty", "empty", 1}}
	for _, n := range replicaCounts {
		cases = append(cases, struct {
			name string
			ring string
			n    int
		}{fmt.Sprintf("replicas=%d", n), fmt.Sprintf("tp%d", n), n})
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var sum, maxHeap float64
			var cached, replicas int
			for b.Loop() {
				var waits []func() (childResult, error)
				for _, shard := range shardNames(tc.n) {
					wait, err := startChild(childSpec{Mode: "replica", Ring: tc.ring, Shard: shard})
					if err != nil {
						b.Fatal(err)
					}
					waits = append(waits, wait)
				}
				for _, wait := range waits {
					res, err := wait()
					if err != nil {
						b.Fatal(err)
					}
					mb := float64(res.HeapAlloc)
					sum += mb
					maxHeap = max(maxHeap, mb)
					cached += res.Cached
					replicas++
				}
			}
			b.ReportMetric(sum/float64(replicas), "heap-B/replica")
			b.ReportMetric(maxHeap, "max-heap-B")
			b.ReportMetric(float64(cached)/float64(replicas), "cached/replica")
		})
	}
}

// BenchmarkSharderHeap: the sharder's live heap during sweeps of 1,000
// and of 20,000 assigned ConfigMaps (a separate process that sweeps for
// at least 3 s and samples the heap after a forced GC every 10 ms, see
// childSweep: the largest and the median sample),
// and, at 20,000, the live heap while holding one LIST response of every
// ConfigMap's metadata with resourceVersion "0" (list=rv0, which the API
// server answers in full, limit or not) against one page of 500
// (list=page). Run with -benchtime 1x; the objects are created before each
// size's sub-benchmark, so the sizes run in this order.
func BenchmarkSharderHeap(b *testing.B) {
	ctx := context.Background()
	sweepRing := ring{name: "sweep", shards: []string{"s0"}}
	if err := holdLease(ctx, "sweep-shard-s0", map[string]string{"sharding.kubeloop.dev/ring": "sweep", "sharding.kubeloop.dev/shard": "s0"}); err != nil {
		b.Fatal(err)
	}
	for _, k := range []int{1000, 20000} {
		if err := ensureConfigMaps(ctx, k, []ring{sweepRing}); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("objects=%d", k), func(b *testing.B) {
			var base, peak, median, secs float64
			var listed, runs, samples int
			for b.Loop() {
				wait, err := startChild(childSpec{Mode: "sweep", Ring: "sweep", Shard: "s0", Sweeps: 3})
				if err != nil {
					b.Fatal(err)
				}
				res, err := wait()
				if err != nil {
					b.Fatal(err)
				}
				base += float64(res.HeapAlloc)
				peak += float64(res.PeakLive)
				median += float64(res.MedianLive)
				samples += res.Samples
				secs += res.Seconds
				listed = res.Listed
				runs++
			}
			b.ReportMetric(peak/float64(runs), "max-live-heap-B-in-sweep")
			b.ReportMetric(median/float64(runs), "median-live-heap-B-in-sweep")
			b.ReportMetric(float64(samples)/float64(runs), "samples")
			b.ReportMetric(base/float64(runs), "idle-heap-B")
			b.ReportMetric(secs/float64(runs), "s/sweep")
			b.ReportMetric(float64(listed), "objects/sweep")
		})
	}
	for _, rv0 := range []bool{true, false} {
		name := "list=page/objects=20000"
		if rv0 {
			name = "list=rv0/objects=20000"
		}
		b.Run(name, func(b *testing.B) {
			var held float64
			var items, runs int
			for b.Loop() {
				wait, err := startChild(childSpec{Mode: "list", ListRV0: rv0})
				if err != nil {
					b.Fatal(err)
				}
				res, err := wait()
				if err != nil {
					b.Fatal(err)
				}
				held += (float64(res.PeakLive) - float64(res.HeapAlloc))
				items = res.Listed
				runs++
			}
			b.ReportMetric(held/float64(runs), "held-B")
			b.ReportMetric(float64(items), "items/response")
		})
	}
}
