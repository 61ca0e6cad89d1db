package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The scaling series is the table "coldstart": rows ColdStart/objects=N,
// one column per stack.
const seriesPrefix = "ColdStart/objects="

// seriesSizes returns the object counts of the series' rows, ascending,
// with their row names.
func seriesSizes(t *table) (sizes []int, rows map[int]string) {
	rows = map[int]string{}
	if t == nil {
		return nil, rows
	}
	for _, r := range t.rows {
		n, err := strconv.Atoi(strings.TrimPrefix(r, seriesPrefix))
		if err != nil || !strings.HasPrefix(r, seriesPrefix) {
			continue
		}
		sizes = append(sizes, n)
		rows[n] = r
	}
	slices.Sort(sizes)
	return sizes, rows
}

// growthTarget completes a growth target from the series: kubeloop at the
// largest size against kubeloop at the smallest.
func growthTarget(tg target, t *table) target {
	tg.peer = ours
	sizes, rows := seriesSizes(t)
	if len(sizes) < 2 {
		tg.what = fmt.Sprintf("growth: %s at 1M ConfigMaps ≤%.2fx kubeloop's own at 10k", tg.what, tg.max)
		tg.row = seriesPrefix + "1000000"
		return tg
	}
	small, big := sizes[0], sizes[len(sizes)-1]
	tg.what = fmt.Sprintf("growth: %s at %s ConfigMaps ≤%.2fx kubeloop's own at %s", tg.what, human(big), tg.max, human(small))
	tg.row, tg.peerRow = rows[big], rows[small]
	return tg
}

// human writes an object count as 10k or 1M.
func human(n int) string {
	switch {
	case n >= 1e6 && n%1e6 == 0:
		return strconv.Itoa(n/1e6) + "M"
	case n >= 1e3 && n%1e3 == 0:
		return strconv.Itoa(n/1e3) + "k"
	}
	return strconv.Itoa(n)
}

// seriesImpls is the series' stacks, kubeloop first.
func seriesImpls(t *table) []string {
	impls := []string{ours}
	for _, im := range t.impls {
		if im != ours {
			impls = append(impls, im)
		}
	}
	return impls
}

// renderScaling is the section of the scaling series: a table per size and
// stack, the growth from the smallest to the largest size, and the plot.
func renderScaling(t *table, svgLink string) string {
	sizes, rows := seriesSizes(t)
	if len(sizes) == 0 {
		return ""
	}
	impls := seriesImpls(t)
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	names := make([]string, len(sizes))
	for i, n := range sizes {
		names[i] = human(n)
	}
	p("## Scaling: cold start at %s ConfigMaps\n\n", strings.Join(names, ", "))
	p("BenchmarkColdStart: time and CPU until every ConfigMap has been reconciled, and the heap the child holds\n")
	p("after sync and GC above its heap before the stack started, in total and per object; medians of the rounds\n")
	p("(fewer at the largest size, see the commands). The last column is kubeloop's figure over the stack's.\n\n")
	if svgLink != "" {
		p("![cold start cost per object against the number of ConfigMaps](%s)\n\n", svgLink)
	}
	p("| ConfigMaps | stack | s | cpu-s | µs/object | cpu-µs/object | heap/object | peak RSS | kubeloop / stack (time, CPU, heap) |\n")
	p("|---|---|---|---|---|---|---|---|---|\n")
	get := func(n int, unit, impl string) (float64, bool) { return t.get(rows[n], unit, impl) }
	cell := func(n int, unit, impl string, f func(float64) string) string {
		if v, ok := get(n, unit, impl); ok {
			return f(v)
		}
		return "–"
	}
	num := func(v float64) string { return format(v, "") }
	for _, n := range sizes {
		for _, im := range impls {
			if _, ok := get(n, "us/object", im); !ok {
				continue
			}
			rel := "–"
			if im != ours {
				var rs []string
				for _, u := range []string{"us/object", "cpu-us/object", "B/object"} {
					o, ok1 := get(n, u, ours)
					v, ok2 := get(n, u, im)
					if !ok1 || !ok2 {
						rs = append(rs, "–")
						continue
					}
					rs = append(rs, ratio(o, v))
				}
				rel = strings.Join(rs, ", ")
			}
			p("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", human(n), im,
				cell(n, "s/coldstart", im, num), cell(n, "cpu-s/coldstart", im, num),
				cell(n, "us/object", im, num), cell(n, "cpu-us/object", im, num),
				cell(n, "B/object", im, func(v float64) string { return format(v, "B/object") }),
				cell(n, "peak-RSS-MiB", im, func(v float64) string { return num(v) + " MiB" }), rel)
		}
	}
	if len(sizes) >= 2 {
		small, big := sizes[0], sizes[len(sizes)-1]
		p("\nGrowth of the cost per object from %s to %s ConfigMaps (the figure at %s over the figure at %s;\n", human(small), human(big), human(big), human(small))
		p("kubeloop's targets above: at most 1.15x):\n\n")
		p("| stack | time per object | CPU per object | heap per object |\n|---|---|---|---|\n")
		for _, im := range impls {
			var rs []string
			for _, u := range []string{"us/object", "cpu-us/object", "B/object"} {
				a, ok1 := get(big, u, im)
				c, ok2 := get(small, u, im)
				if !ok1 || !ok2 {
					rs = append(rs, "–")
					continue
				}
				rs = append(rs, ratio(a, c))
			}
			p("| %s | %s |\n", im, strings.Join(rs, " | "))
		}
	}
	p("\n")
	return b.String()
}

// stackColors are the plot's line colours by stack.
var stackColors = map[string]string{
	"kubeloop":           "#1f77b4",
	"controller-runtime": "#d62728",
	"client-go":          "#2ca02c",
}

// scalingSVG plots the series' three costs per object against the object
// count (log scale), one panel each, one line per stack.
func scalingSVG(t *table) string {
	sizes, rows := seriesSizes(t)
	if len(sizes) == 0 {
		return ""
	}
	impls := seriesImpls(t)
	panels := []struct {
		title, unit string
		scale       float64
		axis        string
	}{
		{"cold start time per object", "us/object", 1, "µs"},
		{"cold start CPU per object", "cpu-us/object", 1, "CPU µs"},
		{"heap per object after sync and GC", "B/object", 1.0 / 1024, "KiB"},
	}
	const (
		pw, ph               = 300.0, 260.0 // panel
		left, right, top, bo = 52.0, 24.0, 56.0, 44.0
		width                = 3 * pw
		height               = ph + 40
	)
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	// Legend.
	lx := 10.0
	for _, im := range impls {
		p(`<line x1="%.0f" y1="14" x2="%.0f" y2="14" stroke="%s" stroke-width="2"/><circle cx="%.0f" cy="14" r="3" fill="%s"/>`, lx, lx+22, color(im), lx+11, color(im))
		p(`<text x="%.0f" y="18">%s</text>`+"\n", lx+28, im)
		lx += 40 + 7*float64(len(im))
	}
	p(`<text x="%.0f" y="18" text-anchor="end" fill="#555">ConfigMaps (log scale)</text>`+"\n", width-10)
	lo, hi := math.Log10(float64(sizes[0])), math.Log10(float64(sizes[len(sizes)-1]))
	for i, pn := range panels {
		x0 := float64(i) * pw
		ax, ay, aw, ah := x0+left, top, pw-left-right, ph-top-bo+40
		xOf := func(n int) float64 {
			if hi == lo {
				return ax + aw/2
			}
			return ax + (math.Log10(float64(n))-lo)/(hi-lo)*aw
		}
		maxV := 0.0
		for _, n := range sizes {
			for _, im := range impls {
				if v, ok := t.get(rows[n], pn.unit, im); ok {
					maxV = math.Max(maxV, v*pn.scale)
				}
			}
		}
		step, top := niceAxis(maxV)
		yOf := func(v float64) float64 { return ay + ah - v/top*ah }
		p(`<text x="%.0f" y="40" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x0+pw/2, pn.title)
		for v := 0.0; v <= top+step/2; v += step {
			y := yOf(v)
			p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e4e4e4"/>`, ax, y, ax+aw, y)
			p(`<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", ax-4, y+4, strconv.FormatFloat(v, 'g', 4, 64))
		}
		p(`<text x="%.1f" y="%.1f" transform="rotate(-90 %.1f %.1f)" text-anchor="middle" fill="#555">%s</text>`+"\n", x0+12, ay+ah/2, x0+12, ay+ah/2, pn.axis)
		p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`, ax, ay+ah, ax+aw, ay+ah)
		p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", ax, ay, ax, ay+ah)
		for _, n := range sizes {
			x := xOf(n)
			p(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`, x, ay+ah, x, ay+ah+4)
			p(`<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, ay+ah+16, human(n))
		}
		for _, im := range impls {
			var pts []string
			for _, n := range sizes {
				if v, ok := t.get(rows[n], pn.unit, im); ok {
					x, y := xOf(n), yOf(v*pn.scale)
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
					p(`<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s, %s: %s %s</title></circle>`+"\n", x, y, color(im), im, human(n), strconv.FormatFloat(v*pn.scale, 'g', 3, 64), pn.axis)
				}
			}
			if len(pts) > 1 {
				p(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), color(im))
			}
		}
	}
	p("</svg>\n")
	return b.String()
}

func color(impl string) string {
	if c, ok := stackColors[impl]; ok {
		return c
	}
	return "#7f7f7f"
}

// niceAxis returns a tick step of 1, 2 or 5 times a power of ten and the
// axis top, a multiple of the step at or above max, for about 4 ticks.
func niceAxis(max float64) (step, top float64) {
	if max <= 0 {
		return 1, 1
	}
	raw := max / 4
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		step = m * mag
		if step >= raw {
			break
		}
	}
	return step, math.Ceil(max/step) * step
}
