package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
)

// report collects what a run did, for the summary.
type report struct {
	rewrites map[string]int  // by kind
	changed  map[string]bool // files the rewrites touched
	files    []string        // files whose content changed, in order
	manual   []string        // file:line: note, every note in the module after the run
	gomod    []string        // changes to go.mod
}

func newReport() *report {
	return &report{rewrites: map[string]int{}, changed: map[string]bool{}}
}

func (r *report) count(kind, file string) {
	r.rewrites[kind]++
	r.changed[file] = true
}

func (r *report) changedBy(file string) { r.changed[file] = true }

// print writes the summary: files changed, rewrites by kind, manual items.
func (r *report) print(w io.Writer, dryRun bool) {
	verb := "changed"
	if dryRun {
		verb = "would change"
	}
	fmt.Fprintf(w, "kubeloop-migrate: %d files %s\n", len(r.files), verb)
	for _, f := range r.files {
		fmt.Fprintf(w, "  %s\n", f)
	}
	if len(r.rewrites) > 0 {
		fmt.Fprintln(w, "rewrites:")
		kinds := make([]string, 0, len(r.rewrites))
		for k := range r.rewrites {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		for _, k := range kinds {
			fmt.Fprintf(w, "  %-24s %d\n", k, r.rewrites[k])
		}
	}
	for _, g := range r.gomod {
		fmt.Fprintf(w, "go.mod: %s\n", g)
	}
	fmt.Fprintf(w, "manual items: %d (comments starting %q)\n", len(r.manual), notePrefix)
	for _, m := range r.manual {
		fmt.Fprintf(w, "  %s\n", m)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
