package main

import (
	"strings"
	"testing"
)

const rawQueue = `goos: linux
BenchmarkQueue/case=dup50_p1w1/impl=kubeloop/metrics=on-2   	 3000000	       200.0 ns/op	      46 B/op	       0 allocs/op
BenchmarkQueue/case=dup50_p1w1/impl=crpq/metrics=on-2       	  500000	      2000 ns/op	     709 B/op	       4 allocs/op
BenchmarkQueue/case=dup50_p1w1/impl=kubeloop/metrics=on-2   	 3000000	       330.0 ns/op	      46 B/op	       0 allocs/op
BenchmarkQueue/case=dup50_p1w1/impl=crpq/metrics=on-2       	  500000	      2000 ns/op	     709 B/op	       4 allocs/op
BenchmarkE2E/impl=kubeloop-2 	 1	 1963 ns/op	 5.2 cpu-us/event	 29.8 p50-us
PASS
`

// TestRoundsSpread: raw lines become rows without their impl element and
// GOMAXPROCS suffix, ns/op is sec/op, and the per-round ratios pair the
// i-th runs; the cell gives the range and how many rounds met the bound.
func TestRoundsSpread(t *testing.T) {
	rs := parseRaw(strings.NewReader(rawQueue))
	got := rs.spread("Queue/case=dup50_p1w1/metrics=on", "kubeloop", "Queue/case=dup50_p1w1/metrics=on", "crpq", "sec/op")
	if len(got) != 2 || got[0] < 0.0999 || got[0] > 0.1001 || got[1] < 0.164 || got[1] > 0.166 {
		t.Fatalf("ratios %v, want [0.1 0.165]", got)
	}
	if cell := spreadCell(got, 0.15); cell != "0.100–0.165x (1/2)" {
		t.Errorf("cell %q", cell)
	}
	if v := rs["E2E"]["cpu-us/event"]["kubeloop"]; len(v) != 1 || v[0] != 5.2 {
		t.Errorf("E2E cpu-us/event %v", v)
	}
	if cell := spreadCell(nil, 1); cell != "–" {
		t.Errorf("no rounds: %q", cell)
	}
}
