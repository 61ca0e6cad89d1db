package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// report collects what a run did, for the summary.
type report struct {
	rewrites map[string]int            // by kind
	changed  map[string]bool           // files the rewrites touched
	files    []string                  // files whose content changed, in order
	manual   []manualItem              // every note in the module after the run
	uses     map[string]map[string]int // file -> note text (notePrefix included) -> uses this run
	gomod    []string                  // changes to go.mod
	raised   []raise                   // requirements raised to kubeloop's
	notes    []string                  // lines printed after the summary (how to build against a checkout)
}

func newReport() *report {
	return &report{rewrites: map[string]int{}, changed: map[string]bool{}, uses: map[string]map[string]int{}}
}

func (r *report) count(kind, file string) {
	r.rewrites[kind]++
	r.changed[file] = true
}

func (r *report) changedBy(file string) { r.changed[file] = true }

// use counts one use of a symbol that needs the note text in file.
func (r *report) use(file, text string) {
	if r.uses[file] == nil {
		r.uses[file] = map[string]int{}
	}
	r.uses[file][text]++
}

// whyRaised follows the raised requirements in the summary.
const whyRaised = "go.mod: raised to the versions kubeloop requires (Go's minimal version selection would pick them anyway), " +
	"and the other Kubernetes staging modules (k8s.io/kubectl, k8s.io/apiextensions-apiserver, ...) to k8s.io/api's version, as they are released together; " +
	"a newer version can change other APIs this module uses (for example prometheus/client_golang's v1.API.Query): " +
	"check the code that calls these modules"

// print writes the summary: files changed, rewrites by kind, go.mod's
// changes and the manual items.
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
	for _, rs := range r.raised {
		fmt.Fprintf(w, "go.mod: raised %s %s -> %s\n", rs.module, rs.from, rs.to)
	}
	if len(r.raised) > 0 {
		fmt.Fprintln(w, whyRaised)
	}
	uses := 0
	for _, m := range r.manual {
		uses += max(r.uses[m.file][notePrefix+m.text], 1)
	}
	fmt.Fprintf(w, "manual items: %d (comments starting %q)", len(r.manual), notePrefix)
	if uses > len(r.manual) {
		fmt.Fprintf(w, ", for %d uses", uses)
	}
	fmt.Fprintln(w)
	for _, m := range r.manual {
		fmt.Fprintf(w, "  %s:%d: %s", m.file, m.line, m.text)
		if n := r.uses[m.file][notePrefix+m.text]; n > 1 {
			fmt.Fprintf(w, " (%d uses in this file)", n)
		}
		fmt.Fprintln(w)
	}
	for _, n := range r.notes {
		fmt.Fprintln(w, strings.TrimRight(n, "\n"))
	}
}
