package multicluster_bench

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kubeloop/kubeloop/bench/fakeapiserver"
)

// BenchmarkEngage: see the package doc.
func BenchmarkEngage(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			for range b.N {
				srv := launchFleet(b)
				engageIdle(b, n, srv.CreateSecret, srv.DeleteSecret, startRig(b, srv.Hub(), fakeapiserver.FleetNamespace))
				srv.Stop()
			}
		})
	}
}

// engageIdle engages n clusters through create, reports their engage
// latency, the heap and goroutines per idle cluster, then removes them
// through remove and reports what is left; it stops r.
func engageIdle(b *testing.B, n int, create, remove func(string) error, r *rig) {
	time.Sleep(200 * time.Millisecond) // the provider's informer syncs
	heap0, gor0 := heapAndGoroutines()
	writeProfiles(b, "base")
	cl := names("c", 0, n)
	created := make(map[string]time.Time, n)
	start := time.Now()
	for _, name := range cl {
		created[name] = time.Now()
		require.NoError(b, create(name))
	}
	r.rec.waitFirst(b, cl, 5*time.Minute)
	all := time.Since(start)
	waitSynced(b, r.fleet, cl, time.Minute)
	first, _ := r.rec.firstOf(cl)
	lat := make([]time.Duration, 0, n)
	for name, at := range first {
		lat = append(lat, at.Sub(created[name]))
	}
	sortDurations(lat)
	var collected, collectedTransport atomic.Int64
	for _, name := range cl {
		c, err := r.fleet.GetCluster(context.Background(), name)
		require.NoError(b, err)
		runtime.AddCleanup(c, func(struct{}) { collected.Add(1) }, struct{}{})
		if t := transportOf(c.GetHTTPClient().Transport); t != nil {
			runtime.AddCleanup(t, func(struct{}) { collectedTransport.Add(1) }, struct{}{})
		}
	}
	time.Sleep(time.Second) // idle
	heap1, gor1 := heapAndGoroutines()
	writeProfiles(b, "idle")
	b.ReportMetric(ms(percentile(lat, 50)), "engage-p50-ms")
	b.ReportMetric(ms(percentile(lat, 99)), "engage-p99-ms")
	b.ReportMetric(all.Seconds(), "all-reconciled-s")
	b.ReportMetric(float64(heap1-heap0)/float64(n)/1024, "heap-KiB/cluster")
	b.ReportMetric(float64(gor1-gor0)/float64(n), "goroutines/cluster")

	for _, name := range cl {
		require.NoError(b, remove(name))
	}
	waitGone(b, r.fleet, cl, 2*time.Minute)
	settle(5 * time.Second)
	heap2, gor2 := heapAndGoroutines()
	writeProfiles(b, "left")
	time.Sleep(100 * time.Millisecond) // the cleanups run
	b.ReportMetric(float64(collected.Load())/float64(n), "collected-fraction")
	b.ReportMetric(float64(collectedTransport.Load())/float64(n), "transports-collected")
	b.ReportMetric(float64(heap2-heap0)/1024, "heap-left-KiB")
	b.ReportMetric(float64(gor2-gor0), "goroutines-left")
	if *lateWait > 0 {
		// x/net/http2 keeps a closed connection's read-idle health-check
		// timer (client-go sets 30 s) running, and with it the
		// connection and its transport, until it fires.
		time.Sleep(*lateWait)
		heap3, _ := heapAndGoroutines()
		time.Sleep(100 * time.Millisecond) // the cleanups run
		b.ReportMetric(float64(heap3-heap0)/1024, "heap-left-late-KiB")
		b.ReportMetric(float64(collectedTransport.Load())/float64(n), "transports-collected-late")
	}
	require.NoError(b, r.stop())
}

// transportOf returns the *http.Transport under rt's wrappers, or nil.
func transportOf(rt http.RoundTripper) *http.Transport {
	for rt != nil {
		switch t := rt.(type) {
		case *http.Transport:
			return t
		case utilnet.RoundTripperWrapper:
			rt = t.WrappedRoundTripper()
		default:
			return nil
		}
	}
	return nil
}

// BenchmarkColdStart: see the package doc.
func BenchmarkColdStart(b *testing.B) {
	const n = 1000
	b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
		for range b.N {
			srv := launchFleet(b)
			cl := names("c", 0, n)
			for _, name := range cl {
				require.NoError(b, srv.CreateSecret(name))
			}
			start := time.Now()
			r := startRig(b, srv.Hub(), fakeapiserver.FleetNamespace)
			waitSynced(b, r.fleet, cl, 5*time.Minute)
			synced := time.Since(start)
			r.rec.waitFirst(b, cl, 5*time.Minute)
			b.ReportMetric(synced.Seconds(), "all-synced-s")
			b.ReportMetric(time.Since(start).Seconds(), "all-reconciled-s")
			require.NoError(b, r.stop())
			srv.Stop()
		}
	})
}

// BenchmarkCycles: see the package doc.
func BenchmarkCycles(b *testing.B) {
	const cycles = 1000
	b.Run(fmt.Sprintf("cycles=%d", cycles), func(b *testing.B) {
		for range b.N {
			srv := launchFleet(b)
			r := startRig(b, srv.Hub(), fakeapiserver.FleetNamespace)
			next := 0
			waves := func(k int) {
				for range k {
					cl := names("c", next, *wave)
					next += *wave
					for _, name := range cl {
						require.NoError(b, srv.CreateSecret(name))
					}
					r.rec.waitFirst(b, cl, time.Minute)
					for _, name := range cl {
						require.NoError(b, srv.DeleteSecret(name))
					}
					waitGone(b, r.fleet, cl, time.Minute)
					for _, name := range cl {
						r.rec.forget(name)
					}
				}
			}
			waves(2)
			settle(5 * time.Second)
			heap0, gor0 := heapAndGoroutines()
			start := time.Now()
			waves(cycles / *wave)
			took := time.Since(start)
			settle(5 * time.Second)
			heap1, gor1 := heapAndGoroutines()
			b.ReportMetric(took.Seconds()/cycles*1000, "ms/cycle")
			b.ReportMetric(float64(heap1)/float64(heap0), "heap-ratio")
			b.ReportMetric(float64(gor1)/float64(gor0), "goroutine-ratio")
			b.ReportMetric(float64(heap1-heap0)/1024, "heap-grown-KiB")
			b.ReportMetric(float64(gor1-gor0), "goroutines-grown")
			require.NoError(b, r.stop())
			srv.Stop()
		}
	})
}

// BenchmarkBlackhole: see the package doc.
func BenchmarkBlackhole(b *testing.B) {
	b.Run(fmt.Sprintf("clusters=%d", *blackholeClusters), func(b *testing.B) {
		for range b.N {
			srv := launchFleet(b)
			r := startRig(b, srv.Hub(), fakeapiserver.FleetNamespace)
			cl := names("c", 0, *blackholeClusters)
			for _, name := range cl {
				require.NoError(b, srv.CreateSecret(name))
			}
			r.rec.waitFirst(b, cl, 2*time.Minute)
			waitSynced(b, r.fleet, cl, time.Minute)
			seq := int64(0)
			phase := func(events int) []time.Duration {
				r.rec.resetLatencies()
				tick := time.NewTicker(2 * time.Millisecond)
				for i := range events {
					<-tick.C
					target := cl[i%len(cl)]
					seq++
					r.rec.firing(target, seq)
					require.NoError(b, srv.Fire(seq, target))
				}
				tick.Stop()
				time.Sleep(500 * time.Millisecond)
				return r.rec.latencies(cl[0])
			}
			// Phases without and with the fault alternate (the cluster is
			// blackholed, then restored), so that neither always runs
			// first; each phase fires *nEvents/pairs events.
			const pairs = 3
			phase(*nEvents / 4) // warm-up
			var none, holed []time.Duration
			unready := 0.0
			for i := range pairs {
				a := phase(*nEvents / pairs)
				none = append(none, a...)
				require.NoError(b, srv.Blackhole(cl[0]))
				h := phase(*nEvents / pairs)
				holed = append(holed, h...)
				b.Logf("pair %d: p99 %v without the fault, %v with it", i, percentile(a, 99), percentile(h, 99))
				if err := r.fleet.ReadyCheck(nil); err != nil {
					unready = 1
					b.Logf("readiness: %v", err)
				}
				require.NoError(b, srv.Restore(cl[0]))
				waitSynced(b, r.fleet, cl[:1], time.Minute)
			}
			sortDurations(none)
			sortDurations(holed)
			b.ReportMetric(unready, "blackhole-unready")
			b.ReportMetric(us(percentile(none, 50)), "p50-none-us")
			b.ReportMetric(us(percentile(none, 99)), "p99-none-us")
			b.ReportMetric(us(percentile(holed, 50)), "p50-blackhole-us")
			b.ReportMetric(us(percentile(holed, 99)), "p99-blackhole-us")
			b.ReportMetric(float64(percentile(holed, 99))/float64(percentile(none, 99)), "p99-ratio")
			b.ReportMetric(float64(len(holed))/float64(pairs*(*nEvents/pairs)*(len(cl)-1)/len(cl)), "seen-fraction")
			require.NoError(b, r.stop())
			srv.Stop()
		}
	})
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
