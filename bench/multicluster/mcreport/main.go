// Command mcreport writes BENCHMARKS-multicluster.md from the output of
// bench/multicluster (hack/bench-multicluster.sh runs it): the targets of
// issue 30 with met / not met, the medians of every figure, the machine,
// the commands and the raw lines.
//
//	mcreport -o ../BENCHMARKS-multicluster.md -machine machine.txt -commands commands.txt results.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	outPath := flag.String("o", "../BENCHMARKS-multicluster.md", "report to write")
	machine := flag.String("machine", "", "file with the machine section's bullets")
	commands := flag.String("commands", "", "file with the commands run")
	flag.Parse()
	var raw []string
	res := results{}
	for _, path := range flag.Args() {
		f, err := os.Open(path)
		if err != nil {
			log.Fatal(err)
		}
		lines, err := parse(f, res)
		_ = f.Close()
		if err != nil {
			log.Fatalf("%s: %v", path, err)
		}
		raw = append(raw, lines...)
	}
	out, err := os.Create(*outPath)
	if err != nil {
		log.Fatal(err)
	}
	defer out.Close()
	w := bufio.NewWriter(out)
	render(w, res, readOr(*machine), readOr(*commands), raw)
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
}

func readOr(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	return strings.TrimRight(string(b), "\n")
}

// results are each benchmark's values by unit, one per run.
type results map[string]map[string][]float64

// parse reads benchmark lines ("BenchmarkX/a=b-2  1  123 ns/op  4.5 unit
// ...") into res and returns them.
func parse(r io.Reader, res results) ([]string, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "Benchmark") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || len(f)%2 != 0 {
			continue
		}
		name := f[0]
		if i := strings.LastIndex(name, "-"); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		if res[name] == nil {
			res[name] = map[string][]float64{}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", line, err)
			}
			res[name][f[i+1]] = append(res[name][f[i+1]], v)
		}
		lines = append(lines, line)
	}
	return lines, sc.Err()
}

// median returns the median of bench's unit and whether it was measured.
func (r results) median(bench, unit string) (float64, bool) {
	v := slices.Clone(r[bench][unit])
	if len(v) == 0 {
		return 0, false
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2], true
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2, true
}

// runs returns how many runs of bench there are.
func (r results) runs(bench string) int {
	n := 0
	for _, v := range r[bench] {
		n = max(n, len(v))
	}
	return n
}
