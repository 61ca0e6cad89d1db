package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// rounds holds every run's figure of one comparison, in the order the
// runs were made: row -> unit -> impl -> values. hack/bench.sh interleaves
// the implementations within each round, so the i-th value of two
// implementations comes from the same round.
type rounds map[string]map[string]map[string][]float64

// parseRaw reads `go test -bench` output. A line
// "BenchmarkQueue/case=x/impl=kubeloop/metrics=on-2 N 265 ns/op 0 B/op"
// is row "Queue/case=x/metrics=on" of impl kubeloop; ns/op is recorded as
// sec/op, as benchstat names it.
func parseRaw(r io.Reader) rounds {
	out := rounds{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		row, impl := splitImpl(trimProcs(strings.TrimPrefix(f[0], "Benchmark")))
		if impl == "" {
			continue
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			unit := f[i+1]
			if unit == "ns/op" {
				unit, v = "sec/op", v*1e-9
			}
			if out[row] == nil {
				out[row] = map[string]map[string][]float64{}
			}
			if out[row][unit] == nil {
				out[row][unit] = map[string][]float64{}
			}
			out[row][unit][impl] = append(out[row][unit][impl], v)
		}
	}
	return out
}

// splitImpl removes the "impl=X" element from a benchmark name and returns
// the rest and X ("" when there is none).
func splitImpl(name string) (row, impl string) {
	parts := strings.Split(name, "/")
	kept := parts[:0]
	for _, p := range parts {
		if v, ok := strings.CutPrefix(p, "impl="); ok {
			impl = v
			continue
		}
		kept = append(kept, p)
	}
	return strings.Join(kept, "/"), impl
}

// spread returns the ratio of a's figure to b's in each round (row a of
// impl ia over row b of impl ib, unit unit), for as many rounds as both
// have.
func (rs rounds) spread(rowA, implA, rowB, implB, unit string) []float64 {
	a, b := rs[rowA][unit][implA], rs[rowB][unit][implB]
	var out []float64
	for i := range min(len(a), len(b)) {
		if b[i] != 0 {
			out = append(out, a[i]/b[i])
		}
	}
	return out
}

// spreadCell renders the per-round ratios of a target as "lo–hi (k/n)",
// where k of n rounds meet the bound max; "–" without rounds.
func spreadCell(ratios []float64, max float64) string {
	if len(ratios) == 0 {
		return "–"
	}
	lo, hi, k := ratios[0], ratios[0], 0
	for _, r := range ratios {
		lo, hi = min(lo, r), maxf(hi, r)
		if r <= max {
			k++
		}
	}
	return fmt.Sprintf("%.3f–%.3fx (%d/%d)", lo, hi, k, len(ratios))
}

func maxf(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}
