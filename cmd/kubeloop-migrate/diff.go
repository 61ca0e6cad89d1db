package main

import (
	"fmt"
	"io"
	"strings"
)

// contextLines is the context a hunk shows around its changes, as diff -u.
const contextLines = 3

// unifiedDiff writes the unified diff of a and b (diff -u's format) under
// the names a/name and b/name. It finds a longest common subsequence of
// lines by dynamic programming, which is plenty for source files.
func unifiedDiff(w io.Writer, name, a, b string) {
	x, y := splitLines(a), splitLines(b)
	ops := diffOps(x, y)
	fmt.Fprintf(w, "--- a/%s\n+++ b/%s\n", name, name)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-contextLines, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*contextLines {
				end = min(end+contextLines, len(ops))
				break
			}
			end = run
		}
		writeHunk(w, ops[start:end])
		i = end
	}
}

type edit struct {
	kind   byte // ' ', '-' or '+'
	line   string
	ai, bi int // 1-based line numbers in a and b before this op
}

func writeHunk(w io.Writer, ops []edit) {
	var na, nb int
	for _, o := range ops {
		if o.kind != '+' {
			na++
		}
		if o.kind != '-' {
			nb++
		}
	}
	fmt.Fprintf(w, "@@ -%s +%s @@\n", span(ops[0].ai, na), span(ops[0].bi, nb))
	for _, o := range ops {
		fmt.Fprintf(w, "%c%s\n", o.kind, o.line)
	}
}

func span(start, n int) string {
	if n == 0 {
		start--
	}
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffOps returns the edit script from x to y.
func diffOps(x, y []string) []edit {
	n, m := len(x), len(y)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []edit
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, edit{' ', x[i], i + 1, j + 1})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]): // deletions first, as diff -u
			ops = append(ops, edit{'-', x[i], i + 1, j + 1})
			i++
		default:
			ops = append(ops, edit{'+', y[j], i + 1, j + 1})
			j++
		}
	}
	return ops
}
