package main

import (
	"bufio"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// target is one row of the targets table.
type target struct {
	what     string
	bench    string
	unit     string
	shown    func(v float64) string // the measured figure
	bound    string
	ok       func(v float64) bool // nil: reported, no bound
	extra    func(r results) string
	peer     string
	optional bool // a run without it (no -real) leaves the row out
}

const notRunMCR = "multicluster-runtime: not run (the module proxy answers 403 for sigs.k8s.io/multicluster-runtime)"

func targets() []target {
	msf := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " ms" }
	engage := func(n int) target {
		t := target{
			what:  fmt.Sprintf("engage latency at %d clusters (Secret created to first reconcile in it), fake fleet", n),
			bench: fmt.Sprintf("BenchmarkEngage/clusters=%d", n), unit: "engage-p99-ms",
			shown: func(v float64) string { return "p99 " + msf(v) },
			extra: func(r results) string {
				p50, _ := r.median(fmt.Sprintf("BenchmarkEngage/clusters=%d", n), "engage-p50-ms")
				all, _ := r.median(fmt.Sprintf("BenchmarkEngage/clusters=%d", n), "all-reconciled-s")
				return fmt.Sprintf("p50 %s; all %d reconciled %.2f s after the first create", msf(p50), n, all)
			},
			bound: "reported", peer: notRunMCR,
		}
		if n == 1000 {
			t.bound = "p99 ≤ 1 s"
			t.ok = func(v float64) bool { return v <= 1000 }
		}
		return t
	}
	kib := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " KiB" }
	return []target{
		engage(10), engage(100), engage(1000),
		{what: "heap per engaged idle cluster, one kind, 1,000 clusters (fake fleet)", bench: "BenchmarkEngage/clusters=1000", unit: "heap-KiB/cluster",
			shown: kib, bound: "≤ 256 KiB", ok: func(v float64) bool { return v <= 256 }, peer: "controller-runtime cluster.Cluster (the anchor): about 3.9 MiB (issue 30's figure, not measured here)"},
		{what: "goroutines per engaged idle cluster, one kind, 1,000 clusters (fake fleet, HTTP/1.1)", bench: "BenchmarkEngage/clusters=1000", unit: "goroutines/cluster",
			shown: func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }, bound: "≤ 4", ok: func(v float64) bool { return v <= 4 }, peer: notRunMCR},
		{what: "heap per engaged idle cluster, one kind, 50 clusters on a real control plane (TLS, HTTP/2)", bench: "BenchmarkRealEngage/clusters=50", unit: "heap-KiB/cluster",
			shown: kib, bound: "≤ 256 KiB", ok: func(v float64) bool { return v <= 256 }, optional: true},
		{what: "goroutines per engaged idle cluster, one kind, 50 clusters on a real control plane", bench: "BenchmarkRealEngage/clusters=50", unit: "goroutines/cluster",
			shown: func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }, bound: "≤ 4", ok: func(v float64) bool { return v <= 4 }, optional: true},
		{what: "engage latency at 50 clusters on a real control plane", bench: "BenchmarkRealEngage/clusters=50", unit: "engage-p99-ms",
			shown: func(v float64) string { return "p99 " + msf(v) }, bound: "reported", optional: true,
			extra: func(r results) string {
				p50, _ := r.median("BenchmarkRealEngage/clusters=50", "engage-p50-ms")
				return "p50 " + msf(p50)
			}},
		{what: "cold start with 1,000 clusters: all synced (fake fleet)", bench: "BenchmarkColdStart/clusters=1000", unit: "all-synced-s",
			shown: func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " s" }, bound: "≤ 30 s on 2 cores", ok: func(v float64) bool { return v <= 30 }},
		{what: "1,000 engage/disengage cycles: heap back to baseline", bench: "BenchmarkCycles/cycles=1000", unit: "heap-ratio",
			shown: func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) + "x the baseline" }, bound: "≤ 1.05x", ok: func(v float64) bool { return v <= 1.05 },
			extra: func(r results) string {
				g, _ := r.median("BenchmarkCycles/cycles=1000", "heap-grown-KiB")
				ms, _ := r.median("BenchmarkCycles/cycles=1000", "ms/cycle")
				return fmt.Sprintf("%+.0f KiB; %.2f ms per cycle", g, ms)
			}},
		{what: "1,000 engage/disengage cycles: goroutines back to baseline", bench: "BenchmarkCycles/cycles=1000", unit: "goroutine-ratio",
			shown: func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) + "x the baseline" }, bound: "≤ 1.05x", ok: func(v float64) bool { return v <= 1.05 }},
		{what: "what 1,000 clusters leave behind once they all left (fake fleet)", bench: "BenchmarkEngage/clusters=1000", unit: "heap-left-KiB",
			shown: func(v float64) string { return fmt.Sprintf("%.1f KiB per cluster", v/1000) }, bound: "reported",
			extra: func(r results) string {
				g, _ := r.median("BenchmarkEngage/clusters=1000", "goroutines-left")
				c, _ := r.median("BenchmarkEngage/clusters=1000", "collected-fraction")
				return fmt.Sprintf("%.0f goroutines left, %.0f%% of the Clusters collected; the high-water mark of the runtime's goroutine descriptors and of maps Go never shrinks, which the cycles rows show does not grow", g, 100*c)
			}},
		{what: "what 50 clusters of a real control plane leave behind, 35 s after they left", bench: "BenchmarkRealEngage/clusters=50", unit: "heap-left-late-KiB",
			shown: func(v float64) string { return fmt.Sprintf("%.1f KiB per cluster", v/50) }, bound: "reported", optional: true,
			extra: func(r results) string {
				now, _ := r.median("BenchmarkRealEngage/clusters=50", "heap-left-KiB")
				tr, _ := r.median("BenchmarkRealEngage/clusters=50", "transports-collected-late")
				return fmt.Sprintf("%.1f KiB per cluster right after they left, held by golang.org/x/net/http2's 30 s read-idle timer of each closed connection; %.0f%% of the transports collected 35 s later", now/50, 100*tr)
			}},
		{what: "one cluster of 100 blackholed: the others' event-to-reconcile p99 over the run without the fault", bench: "BenchmarkBlackhole/clusters=100", unit: "p99-ratio",
			shown: func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "x" }, bound: "≤ 1.2x", ok: func(v float64) bool { return v <= 1.2 },
			extra: func(r results) string {
				a, _ := r.median("BenchmarkBlackhole/clusters=100", "p99-none-us")
				b, _ := r.median("BenchmarkBlackhole/clusters=100", "p99-blackhole-us")
				u, _ := r.median("BenchmarkBlackhole/clusters=100", "blackhole-unready")
				seen := "the readiness check did not show the blackholed cluster (its relist hangs without a client deadline)"
				if u > 0 {
					seen = "the readiness check showed the blackholed cluster"
				}
				return fmt.Sprintf("p99 %.0f µs without, %.0f µs with (medians; the ratio is the median of each run's ratio); %s", a, b, seen)
			}},
	}
}

func render(w *bufio.Writer, r results, machine, commands string, raw []string) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p("# Multicluster benchmarks (`make bench-multicluster`)")
	p("")
	p("Written by bench/multicluster/mcreport from hack/bench-multicluster.sh's run of bench/multicluster (issue 30);")
	p("the package doc of bench/multicluster says what each benchmark does. Medians over the runs; one OS process per")
	p("benchmark and run, GOMAXPROCS=2. Many clusters are served by the fake fleet server (bench/cmd/fakefleet, a child")
	p("process: a hub of kubeconfig Secrets and member clusters under /clusters/<name>/, plain HTTP/1.1); a few by one")
	p("real control plane (kubeloop's envtest, TLS and HTTP/2), each cluster a name for it with its own transport.")
	p("")
	if machine != "" {
		p("## Machine")
		p("")
		p("%s", machine)
		p("")
	}
	p("## Targets")
	p("")
	p("| issue | target | kubeloop | peer | ratio | bound | met |")
	p("|---|---|---|---|---|---|---|")
	for _, t := range targets() {
		v, ok := r.median(t.bench, t.unit)
		if !ok && t.optional {
			continue
		}
		peer := t.peer
		if peer == "" {
			peer = "–"
		}
		if !ok {
			p("| 30 | %s | not measured | %s | – | %s | not met: not measured |", t.what, peer, t.bound)
			continue
		}
		shown := t.shown(v)
		if t.extra != nil {
			shown += " (" + t.extra(r) + ")"
		}
		met := "reported"
		if t.ok != nil {
			met = "not met"
			if t.ok(v) {
				met = "**met**"
			}
		}
		p("| 30 | %s | %s | %s | – | %s | %s |", t.what, shown, peer, t.bound, met)
	}
	p("")
	p("## All figures (medians)")
	p("")
	for _, bench := range slices.Sorted(maps.Keys(r)) {
		var cells []string
		for _, unit := range slices.Sorted(maps.Keys(r[bench])) {
			if unit == "ns/op" {
				continue
			}
			v, _ := r.median(bench, unit)
			cells = append(cells, fmt.Sprintf("%s %s", strconv.FormatFloat(v, 'g', 4, 64), unit))
		}
		p("- `%s` (%d runs): %s", bench, r.runs(bench), strings.Join(cells, ", "))
	}
	p("")
	if commands != "" {
		p("## Commands")
		p("")
		p("```")
		p("%s", commands)
		p("```")
		p("")
	}
	p("## Raw results")
	p("")
	p("```")
	for _, l := range raw {
		p("%s", l)
	}
	p("```")
}
