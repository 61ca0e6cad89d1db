package main

import (
	"strings"
	"testing"
)

// raw is two rounds of BenchmarkRealE2E with the floor: kubeloop's CPU per
// patch is 0.65x controller-runtime's, whose 0.6x bound (54) lies below
// the floor's 60; its cold start is 0.25x, met.
const raw = `BenchmarkRealE2E/impl=kubeloop-2 1 6000 ns/op 0.05 s/coldstart 58 cpu-us/event
BenchmarkRealE2E/impl=controller-runtime-2 1 2000 ns/op 0.2 s/coldstart 90 cpu-us/event
BenchmarkRealE2E/impl=client-go-2 1 2000 ns/op 0.07 s/coldstart 73 cpu-us/event
BenchmarkRealE2E/impl=floor-2 1 2000 ns/op 0.04 s/coldstart 59 cpu-us/event
BenchmarkRealE2E/impl=kubeloop-2 1 6000 ns/op 0.05 s/coldstart 59 cpu-us/event
BenchmarkRealE2E/impl=controller-runtime-2 1 2000 ns/op 0.2 s/coldstart 90 cpu-us/event
BenchmarkRealE2E/impl=client-go-2 1 2000 ns/op 0.07 s/coldstart 73 cpu-us/event
BenchmarkRealE2E/impl=floor-2 1 2000 ns/op 0.04 s/coldstart 61 cpu-us/event
BenchmarkRealFailover/case=release/impl=kubeloop-2 1 1 ns/op 0.6 s/failover
`

// TestRender checks the targets' verdicts, the floor's verdict and column,
// and the medians.
func TestRender(t *testing.T) {
	md := render(parse(strings.NewReader(raw)), "- machine", "cmds\n", "")
	for _, want := range []string{
		"| perf (21) | cold start: time until every ConfigMap was reconciled ≤0.4x controller-runtime's | 0.05 s/coldstart | 0.2 s/coldstart | 0.250x | ≤0.40x | **met** |",
		"| perf (21) | steady state: process CPU per patch ≤0.6x controller-runtime's | 58.5 cpu-us/event | 90.0 cpu-us/event | 0.650x | ≤0.60x | not met: the bound, 54.0 cpu-us/event, is below the floor's 60.0 cpu-us/event |",
		"1 of 2 targets met. 1 of those not met ask for less than the floor",
		"| figure | kubeloop | controller-runtime | client-go | floor | kubeloop / controller-runtime | runs |",
		"| steady state: process CPU per patch (cpu-us/event) | 58.5 | 90.0 | 73.0 | 60.0 | 0.650x | 2 |",
		"| release | 0.60 s | 0.60 s | 0.60 s | 1 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}

// TestRenderWithoutFloor checks that a run without the floor has no floor
// column and a plain verdict.
func TestRenderWithoutFloor(t *testing.T) {
	var kept []string
	for _, l := range strings.Split(raw, "\n") {
		if !strings.Contains(l, "impl=floor") {
			kept = append(kept, l)
		}
	}
	md := render(parse(strings.NewReader(strings.Join(kept, "\n"))), "", "", "")
	if !strings.Contains(md, "| 0.650x | ≤0.60x | not met |") || strings.Contains(md, "floor") {
		t.Errorf("a report without the floor:\n%s", md)
	}
}
