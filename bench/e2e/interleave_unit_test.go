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
