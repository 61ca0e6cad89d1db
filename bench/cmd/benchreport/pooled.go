package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// pooled is every latency event of every round, by stack: what
// bench/e2e's KUBELOOP_E2E_LATENCIES wrote, one file <round>.<stack> per
// round and stack, one latency in µs per line.
type pooled map[string][]float64

// readPooled reads the latency files in dir. Names that are not
// <round>.<stack> are skipped; a line that is not a number is an error.
func readPooled(dir string) (pooled, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := pooled{}
	for _, e := range entries {
		_, stack, ok := strings.Cut(e.Name(), ".")
		if !ok || e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		for i, line := range strings.Fields(string(b)) {
			v, err := strconv.ParseFloat(line, 64)
			if err != nil {
				return nil, fmt.Errorf("%s line %d: %v", e.Name(), i+1, err)
			}
			out[stack] = append(out[stack], v)
		}
	}
	return out, nil
}

// quantile is the q-quantile of vs as bench/e2e takes it from one round
// (the value at index len*q of the sorted values).
func quantile(sorted []float64, q float64) float64 {
	return sorted[min(int(float64(len(sorted))*q), len(sorted)-1)]
}

// apply replaces the e2e table's p50-us and p99-us of every stack that
// has pooled events with the percentile over all of them, and returns how
// many events each stack had (the fewest and the most, for the report's
// note). A round's p99 of 3,000 events is its 30th largest, and how many
// of the machine's late wake-ups a round's events catch moves it
// (BENCHMARKS-perf.md, issue 33 item 2); over every round's events the
// percentile is the same statistic with that many times the events.
func (p pooled) apply(e2e *table) (fewest, most int) {
	row := e2e.vals["E2E"]
	if row == nil {
		return 0, 0
	}
	for stack, vs := range p {
		if len(vs) == 0 {
			continue
		}
		s := slices.Clone(vs)
		slices.Sort(s)
		for unit, q := range map[string]float64{"p50-us": 0.50, "p99-us": 0.99} {
			if row[unit] == nil {
				row[unit] = map[string]float64{}
			}
			if _, ok := row[unit][stack]; !ok {
				continue // a stack benchstat did not see: not in the report
			}
			row[unit][stack] = quantile(s, q)
		}
		if fewest == 0 || len(vs) < fewest {
			fewest = len(vs)
		}
		most = max(most, len(vs))
	}
	return fewest, most
}
