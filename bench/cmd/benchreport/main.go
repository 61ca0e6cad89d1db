// Command benchreport turns `benchstat -format csv -col /impl` outputs into
// BENCHMARKS.md: the machine, the commands, the targets of the workqueue,
// cache and controller issues marked met or not, and every figure as a
// kubeloop/peer ratio.
//
//	benchreport -o BENCHMARKS.md -machine machine.txt -commands commands.txt \
//	    workqueue=queue.csv cache-sync=sync.csv cache-read=read.csv e2e=e2e.csv \
//	    coldstart=coldstart.csv
//
// coldstart (BenchmarkColdStart at several sizes) becomes the scaling
// section, with a plot written beside the report (-svg, by default
// BENCHMARKS-scaling.svg for -o BENCHMARKS.md) and linked from it.
//
// Each name=file.csv may have a file.txt beside it (benchstat's text
// output), which is included verbatim at the end, and a file.raw.txt (the
// `go test -bench` lines the medians summarise), from which each target
// gets the spread of its ratio over the rounds and how many rounds met it.
//
// With -latencies <dir> (the files bench/e2e's KUBELOOP_E2E_LATENCIES
// wrote, <round>.<stack>), the e2e latency p50 and p99 are taken over
// every round's events pooled, instead of the median of the rounds'
// percentiles; the spread column stays per round.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	out := flag.String("o", "BENCHMARKS.md", "output file")
	machine := flag.String("machine", "", "file with the machine description (markdown)")
	commands := flag.String("commands", "", "file with the commands that were run")
	svg := flag.String("svg", "", "where to write the scaling plot (default: the report's name with -scaling.svg)")
	latencies := flag.String("latencies", "", "directory of the e2e latency files (<round>.<stack>): p50 and p99 over all rounds' events")
	flag.Parse()
	var tables []*table
	raws := map[string]string{}
	runs := map[string]rounds{}
	for _, arg := range flag.Args() {
		name, path, ok := strings.Cut(arg, "=")
		if !ok {
			fatalf("argument %q is not name=file.csv", arg)
		}
		f, err := os.Open(path)
		if err != nil {
			fatalf("%v", err)
		}
		t, err := parseCSV(name, f)
		f.Close()
		if err != nil {
			fatalf("%v", err)
		}
		tables = append(tables, t)
		if b, err := os.ReadFile(strings.TrimSuffix(path, ".csv") + ".txt"); err == nil {
			raws[name] = string(b)
		}
		if f, err := os.Open(strings.TrimSuffix(path, ".csv") + ".raw.txt"); err == nil {
			runs[name] = parseRaw(f)
			f.Close()
		}
	}
	link := ""
	for _, t := range tables {
		if t.name != "coldstart" {
			continue
		}
		if *svg == "" {
			*svg = strings.TrimSuffix(*out, ".md") + "-scaling.svg"
		}
		if err := os.WriteFile(*svg, []byte(scalingSVG(t)), 0o644); err != nil {
			fatalf("%v", err)
		}
		link = relativeTo(*out, *svg)
	}
	pool := ""
	if *latencies != "" {
		p, err := readPooled(*latencies)
		if err != nil {
			fatalf("-latencies: %v", err)
		}
		for _, t := range tables {
			if t.name == "e2e" {
				if lo, hi := p.apply(t); hi > 0 {
					pool = fmt.Sprintf("The end-to-end latency p50 and p99 (figures, targets and the floor table) are each stack's percentile over the events of every round pooled, %s per stack, not the median of the rounds' percentiles; the spread column is per round.", eventsRange(lo, hi))
				}
			}
		}
	}
	md := render(tables, readOr(*machine), readOr(*commands), raws, runs, link, pool)
	if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
		fatalf("%v", err)
	}
}

// eventsRange says how many pooled events the stacks had.
func eventsRange(lo, hi int) string {
	if lo == hi {
		return fmt.Sprintf("%d events", lo)
	}
	return fmt.Sprintf("%d to %d events", lo, hi)
}

// relativeTo is target's path from the directory of file, for a link.
func relativeTo(file, target string) string {
	rel, err := filepath.Rel(filepath.Dir(file), target)
	if err != nil {
		return target
	}
	return filepath.ToSlash(rel)
}

func readOr(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		fatalf("%v", err)
	}
	return strings.TrimSpace(string(b))
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchreport: "+format+"\n", args...)
	os.Exit(1)
}

func sortStrings(s []string) { sort.Strings(s) }

// format renders v in unit for humans.
func format(v float64, unit string) string {
	switch {
	case strings.HasPrefix(unit, "sec/"):
		switch {
		case v >= 1:
			return fmt.Sprintf("%.3g s", v)
		case v >= 1e-3:
			return fmt.Sprintf("%.3g ms", v*1e3)
		case v >= 1e-6:
			return fmt.Sprintf("%.3g µs", v*1e6)
		default:
			return fmt.Sprintf("%.3g ns", v*1e9)
		}
	case strings.HasPrefix(unit, "B/"):
		switch {
		case v >= 1<<20:
			return fmt.Sprintf("%.3g MiB", v/(1<<20))
		case v >= 1<<10:
			return fmt.Sprintf("%.3g KiB", v/(1<<10))
		default:
			return fmt.Sprintf("%.0f B", v)
		}
	}
	if (v == math.Trunc(v) || math.Abs(v) >= 1000) && math.Abs(v) < 1e6 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func ratio(a, b float64) string {
	if b == 0 {
		if a == 0 {
			return "= (0/0)"
		}
		return "∞"
	}
	return fmt.Sprintf("%.2fx", a/b)
}
