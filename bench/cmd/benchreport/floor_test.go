package main

import (
	"strings"
	"testing"
)

// e2eLatency is benchstat's CSV of an end-to-end run with the reference
// consumers: the p50 bound at 0.5x controller-runtime's (50 µs) lies
// below the floor's 60 µs, the p99 bound (150 µs) above the floor's 120.
const e2eLatency = `,kubeloop,,controller-runtime,,,,client-go,,,,floor,,,,wire-worker,,,,wire,,,
,p50-us,CI,p50-us,CI,vs base,P,p50-us,CI,vs base,P,p50-us,CI,vs base,P,p50-us,CI,vs base,P,p50-us,CI,vs base,P
E2E-2,70,±5%,100,±5%,+42.86%,p=0.002 n=6,90,±5%,+28.57%,p=0.002 n=6,60,±5%,-14.29%,p=0.002 n=6,50,±5%,-28.57%,p=0.002 n=6,40,±5%,-42.86%,p=0.002 n=6

,kubeloop,,controller-runtime,,,,client-go,,,,floor,,,,wire-worker,,,,wire,,,
,p99-us,CI,p99-us,CI,vs base,P,p99-us,CI,vs base,P,p99-us,CI,vs base,P,p99-us,CI,vs base,P,p99-us,CI,vs base,P
E2E-2,160,±5%,300,±5%,+87.50%,p=0.002 n=6,200,±5%,+25.00%,p=0.002 n=6,120,±5%,-25.00%,p=0.002 n=6,110,±5%,-31.25%,p=0.002 n=6,100,±5%,-37.50%,p=0.002 n=6
`

// TestLatencyFloorVerdict checks that a latency target whose bound lies
// below the floor's figure says so, that one above it is plainly not met,
// and that the floor table shows every reference consumer.
func TestLatencyFloorVerdict(t *testing.T) {
	tb, err := parseCSV("e2e", strings.NewReader(e2eLatency))
	if err != nil {
		t.Fatal(err)
	}
	md := render([]*table{tb}, "", "", nil, nil, "", "")
	reportHas(t, md,
		"| perf (21) | event-to-reconcile latency p50 ≤0.5x controller-runtime's | 70 p50-us | controller-runtime 100 p50-us | 0.700x | ≤0.50x | not met: the bound, 50 p50-us, is below the floor's 60 p50-us |",
		"| perf (21) | event-to-reconcile latency p99 ≤0.5x controller-runtime's | 160 p99-us | controller-runtime 300 p99-us | 0.533x | ≤0.50x | not met |",
		"| perf (21) | event-to-reconcile latency p50 ≤0.85x client-go's | 70 p50-us | client-go 90 p50-us | 0.778x | ≤0.85x | **met** |",
		" 1 of those not met ask for less than the floor",
		"| figure | kubeloop | controller-runtime | client-go | floor | wire-worker | wire | kubeloop / floor | kubeloop − floor |",
		"| latency p50 (µs) | 70 | 100 | 90 | 60 | 50 | 40 |",
	)
}

// reportHas fails t for each of wants that md lacks, and then logs md.
func reportHas(t *testing.T, md string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}
