package e2e_bench

import (
	"slices"
	"testing"
)

func TestSplitBenchPattern(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"BenchmarkE2E", []string{"BenchmarkE2E"}},
		{"BenchmarkE2E/impl=(kubeloop|floor)$", []string{"BenchmarkE2E", "impl=(kubeloop|floor)$"}},
		{"E2E/impl=[a/b]x/y", []string{"E2E", "impl=[a/b]x", "y"}},
		{`E2E/a\/b`, []string{"E2E", `a\/b`}},
	} {
		if got := splitBenchPattern(c.in); !slices.Equal(got, c.want) {
			t.Errorf("splitBenchPattern(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestWarmups checks that by turns every turn of block counted events
// has its uncounted one, and that the prepared events suffice.
func TestWarmups(t *testing.T) {
	for _, c := range []struct{ latency, block, want int }{{3000, 50, 60}, {100, 20, 5}, {101, 20, 6}, {1, 50, 1}} {
		if got := warmups(c.latency, c.block); got != c.want {
			t.Errorf("warmups(%d, %d) = %d, want %d", c.latency, c.block, got, c.want)
		}
	}
}

// TestWithLatencyOf checks that by turns the report's cold start and
// steady state come from the children run alone and only the latency
// phase's figures from the children by turns.
func TestWithLatencyOf(t *testing.T) {
	alone := result{ColdSeconds: 1.2, PeakRSSMiB: 300, HeapMiB: 200, SteadyCPUMicrosPerEvent: 11, EventsPerSecond: 9000, WatchLists: 1, P50Micros: 0}
	turns := result{ColdSeconds: 1.9, PeakRSSMiB: 310, HeapMiB: 210, SteadyCPUMicrosPerEvent: 13, EventsPerSecond: 8000, WatchLists: 1,
		P50Micros: 120, P99Micros: 500, LatencyGCs: 3, LatencyInGC: 2, P99NoGCMicros: 450, FireP50Micros: 200, PingMicros: 40}
	got := withLatencyOf(alone, turns)
	want := alone
	want.P50Micros, want.P99Micros, want.LatencyGCs, want.LatencyInGC = 120, 500, 3, 2
	want.P99NoGCMicros, want.FireP50Micros, want.PingMicros = 450, 200, 40
	if got != want {
		t.Errorf("withLatencyOf = %+v\nwant %+v", got, want)
	}
}
