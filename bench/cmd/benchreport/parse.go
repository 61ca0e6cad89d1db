package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// table holds one comparison's medians: row -> unit -> impl -> value.
type table struct {
	name  string
	impls []string // column order as benchstat printed it
	rows  []string // row order
	vals  map[string]map[string]map[string]float64
}

func (t *table) get(row, unit, impl string) (float64, bool) {
	v, ok := t.vals[row][unit][impl]
	return v, ok
}

// parseCSV reads `benchstat -format csv -col /impl` output. Each block is a
// header row of column names, a row of units, then one row per benchmark
// (name, value, CI, value, CI, ..., vs base, P).
func parseCSV(name string, r io.Reader) (*table, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t := &table{name: name, vals: map[string]map[string]map[string]float64{}}
	seenRow, seenImpl := map[string]bool{}, map[string]bool{}
	var cols map[int]string // value column -> impl
	var units []string
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if len(rec) < 3 {
			continue
		}
		if rec[0] == "" && i+1 < len(recs) && len(recs[i+1]) == len(rec) && recs[i+1][0] == "" && rec[1] != "" {
			cols = map[int]string{}
			for j, c := range rec {
				if j > 0 && c != "" {
					cols[j] = c
					if !seenImpl[c] {
						seenImpl[c] = true
						t.impls = append(t.impls, c)
					}
				}
			}
			units = recs[i+1]
			i++
			continue
		}
		if cols == nil || rec[0] == "" || rec[0] == "geomean" {
			continue
		}
		row := trimProcs(rec[0])
		for j, impl := range cols {
			if j >= len(rec) || j >= len(units) {
				continue
			}
			v, err := strconv.ParseFloat(rec[j], 64)
			if err != nil {
				continue
			}
			unit := units[j]
			if t.vals[row] == nil {
				t.vals[row] = map[string]map[string]float64{}
			}
			if t.vals[row][unit] == nil {
				t.vals[row][unit] = map[string]float64{}
			}
			t.vals[row][unit][impl] = v
			if !seenRow[row] {
				seenRow[row] = true
				t.rows = append(t.rows, row)
			}
		}
	}
	if len(t.rows) == 0 {
		return nil, fmt.Errorf("%s: no benchmark rows", name)
	}
	return t, nil
}

// trimProcs drops the -GOMAXPROCS suffix of a benchmark name.
func trimProcs(s string) string {
	if i := strings.LastIndex(s, "-"); i > 0 {
		if _, err := strconv.Atoi(s[i+1:]); err == nil {
			return s[:i]
		}
	}
	return s
}

// units returns the units of row in a stable order: time first.
func (t *table) units(row string) []string {
	var us []string
	for _, pref := range []string{"sec/op", "B/op", "allocs/op"} {
		if _, ok := t.vals[row][pref]; ok {
			us = append(us, pref)
		}
	}
	var rest []string
	for u := range t.vals[row] {
		if u != "sec/op" && u != "B/op" && u != "allocs/op" {
			rest = append(rest, u)
		}
	}
	sortStrings(rest)
	return append(us, rest...)
}
