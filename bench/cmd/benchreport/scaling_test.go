package main

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// series is benchstat's CSV of a scaling series: kubeloop's time per
// object grows 1.1x from 10k to 1M, its heap per object 1.3x.
const series = `,kubeloop,,controller-runtime,,,
,us/object,CI,us/object,CI,vs base,P
ColdStart/objects=10000-2,20,±1%,40,±1%,+100.00%,p=0.002 n=6
ColdStart/objects=100000-2,21,±1%,50,±1%,+138.10%,p=0.002 n=6
ColdStart/objects=1000000-2,22,±1%,60,±1%,+172.73%,p=0.002 n=6

,kubeloop,,controller-runtime,,,
,B/object,CI,B/object,CI,vs base,P
ColdStart/objects=10000-2,1000,±1%,3000,±1%,+200.00%,p=0.002 n=6
ColdStart/objects=100000-2,1100,±1%,3000,±1%,+172.73%,p=0.002 n=6
ColdStart/objects=1000000-2,1300,±1%,3000,±1%,+130.77%,p=0.002 n=6
`

func seriesTable(t *testing.T) *table {
	t.Helper()
	tb, err := parseCSV("coldstart", strings.NewReader(series))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestGrowthTargets(t *testing.T) {
	md := render([]*table{seriesTable(t)}, "", "", nil, nil, "BENCHMARKS-scaling.svg", "")
	reportHas(t, md,
		"| perf (21) | growth: cold start time per object at 1M ConfigMaps ≤1.15x kubeloop's own at 10k | 22 us/object | kubeloop at 10k 20 us/object | 1.100x | ≤1.15x | **met** |",
		"| perf (21) | growth: heap per object after sync and GC at 1M ConfigMaps ≤1.15x kubeloop's own at 10k | 1.27 KiB/object | kubeloop at 10k 1000 B/object | 1.300x | ≤1.15x | not met |",
		"| perf (21) | growth: cold start CPU per object at 1M ConfigMaps ≤1.15x kubeloop's own at 10k | – | – | – | – | no data |",
		"![cold start cost per object against the number of ConfigMaps](BENCHMARKS-scaling.svg)",
		"| 1M | controller-runtime | – | – | 60 | – | 2.93 KiB | – | 0.37x, –, 0.43x |",
		"| kubeloop | 1.10x | – | 1.30x |",
	)
}

func TestScalingSVG(t *testing.T) {
	svg := scalingSVG(seriesTable(t))
	d := xml.NewDecoder(strings.NewReader(svg))
	lines, circles := 0, 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "polyline":
				lines++
			case "circle":
				circles++
			}
		}
	}
	// 3 panels; 2 stacks; us/object and B/object have 3 points each, cpu-us/object none.
	if lines != 4 {
		t.Errorf("%d polylines, want 4", lines)
	}
	if circles != 2+12 { // legend + points
		t.Errorf("%d circles, want 14", circles)
	}
}

func TestNiceAxis(t *testing.T) {
	for _, c := range []struct{ max, step, top float64 }{
		{3.15, 1, 4}, {225, 100, 300}, {37.7, 10, 40}, {0, 1, 1}, {9, 2.5, 10},
	} {
		step, top := niceAxis(c.max)
		if step != c.step || top != c.top {
			t.Errorf("niceAxis(%v) = %v, %v; want %v, %v", c.max, step, top, c.step, c.top)
		}
	}
}
