package e2e_bench

import (
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/kubeloop/kubeloop/internal/probe"
)

// printProbe writes, for a stack built with the kubeloop_probe build tag,
// the p50 and p90 of each step of the latency phase's events between two
// consecutive points both reached (internal/probe), and of the whole way
// from the read to the observation. Each step includes one mark's reading
// of the clock. An event whose read was not marked (a stack without the
// probe's points) counts in no step. sentRead, the times from the server's
// send to the read (negative where the read was not marked), comes first
// when there are any.
func printProbe(w io.Writer, stack string, sentRead []float64, marks [][probe.NumPoints]int64) {
	steps := probeSteps(marks)
	var sr []float64
	for _, v := range sentRead {
		if v >= 0 {
			sr = append(sr, v)
		}
	}
	if len(sr) > 0 {
		steps = append([]probeStep{stepOf("sent->read", sr)}, steps...)
	}
	for _, s := range steps {
		fmt.Fprintf(w, "probe %s %-24s n=%-5d p50 %6.2f µs  p90 %6.2f µs\n", stack, s.name, s.n, s.p50, s.p90)
	}
}

type probeStep struct {
	name     string
	n        int
	p50, p90 float64 // µs
}

// probeSteps returns the steps in the order of the points, then the
// total from read to observed.
func probeSteps(marks [][probe.NumPoints]int64) []probeStep {
	steps := map[[2]probe.Point][]float64{}
	var total []float64
	for _, m := range marks {
		if m[probe.Read] == 0 || m[probe.Observed] == 0 || m[probe.Observed] < m[probe.Read] {
			continue
		}
		total = append(total, float64(m[probe.Observed]-m[probe.Read])/1e3)
		from := probe.Read
		for p := probe.Read + 1; p < probe.NumPoints; p++ {
			if m[p] == 0 {
				continue
			}
			k := [2]probe.Point{from, p}
			steps[k] = append(steps[k], float64(m[p]-m[from])/1e3)
			from = p
		}
	}
	keys := make([][2]probe.Point, 0, len(steps))
	for k := range steps {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]probe.Point) int {
		if a[1] != b[1] {
			return int(a[1]) - int(b[1])
		}
		return int(a[0]) - int(b[0])
	})
	var out []probeStep
	for _, k := range keys {
		out = append(out, stepOf(k[0].String()+"->"+k[1].String(), steps[k]))
	}
	if len(total) > 0 {
		out = append(out, stepOf("read->observed", total))
	}
	return out
}

// tailOf returns the sentRead and marks of the events whose lat (the
// three indexed alike) is at least lat's quantile q.
func tailOf(lat, sentRead []float64, marks [][probe.NumPoints]int64, q float64) ([]float64, [][probe.NumPoints]int64) {
	if len(lat) == 0 {
		return nil, nil
	}
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	cut := sorted[int(float64(len(sorted)-1)*q)]
	var sr []float64
	var ms [][probe.NumPoints]int64
	for i, l := range lat {
		if l >= cut && i < len(sentRead) && i < len(marks) {
			sr, ms = append(sr, sentRead[i]), append(ms, marks[i])
		}
	}
	return sr, ms
}

// stepOf returns the step's count, p50 and p90 of v (µs, not empty),
// which it sorts.
func stepOf(name string, v []float64) probeStep {
	slices.Sort(v)
	return probeStep{name, len(v), v[len(v)/2], v[len(v)*9/10]}
}

func TestTailOf(t *testing.T) {
	var m [4][probe.NumPoints]int64
	for i := range m {
		m[i][probe.Read] = int64(i + 1)
	}
	sr, ms := tailOf([]float64{5, 40, 10, 30}, []float64{1, 2, 3, 4}, m[:], 0.7)
	if !slices.Equal(sr, []float64{2, 4}) || len(ms) != 2 || ms[0][probe.Read] != 2 || ms[1][probe.Read] != 4 {
		t.Errorf("tailOf = %v, %v; want the events of lat 40 and 30", sr, ms)
	}
}

func TestProbeSteps(t *testing.T) {
	var a, b, skipped [probe.NumPoints]int64
	a[probe.Read], a[probe.Decoded], a[probe.Observed] = 1000, 3000, 6000
	b[probe.Read], b[probe.Decoded], b[probe.Observed] = 1000, 5000, 10000
	skipped[probe.Decoded] = 7 // no read marked: counts nowhere
	got := probeSteps([][probe.NumPoints]int64{a, b, skipped})
	want := []probeStep{
		{"read->decoded", 2, 4, 4},
		{"decoded->observed", 2, 5, 5},
		{"read->observed", 2, 9, 9},
	}
	if !slices.Equal(got, want) {
		t.Errorf("probeSteps = %v, want %v", got, want)
	}
}
