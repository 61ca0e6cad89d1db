package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPooled checks that the e2e latency percentiles become those of every
// round's events together: two rounds whose own p99s are far apart give
// the p99 of the 200 events, not either round's or their median.
func TestPooled(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, vs func(i int) string) {
		var b strings.Builder
		for i := range 100 {
			b.WriteString(vs(i) + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Round 1: 1..100; round 2: 1..98 and two stalls of 5000.
	write("r1.kubeloop", func(i int) string { return strconv.Itoa(i + 1) })
	write("r2.kubeloop", func(i int) string {
		if i >= 98 {
			return "5000"
		}
		return strconv.Itoa(i + 1)
	})
	write("r1.floor", func(i int) string { return "7" })
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("not a latency file"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := readPooled(dir)
	if err != nil {
		t.Fatal(err)
	}
	e2e := &table{name: "e2e", vals: map[string]map[string]map[string]float64{"E2E": {
		"p50-us": {"kubeloop": 1, "floor": 1},
		"p99-us": {"kubeloop": 1, "floor": 1},
	}}}
	lo, hi := p.apply(e2e)
	if lo != 100 || hi != 200 {
		t.Errorf("events per stack %d to %d, want 100 to 200", lo, hi)
	}
	// Sorted: 1,1,2,2,...,98,98,99,100,5000,5000; index 100 is 51, index 198 is 5000.
	if v, _ := e2e.get("E2E", "p50-us", "kubeloop"); v != 51 {
		t.Errorf("pooled p50 %v, want 51", v)
	}
	if v, _ := e2e.get("E2E", "p99-us", "kubeloop"); v != 5000 {
		t.Errorf("pooled p99 %v, want 5000", v)
	}
	if v, _ := e2e.get("E2E", "p99-us", "floor"); v != 7 {
		t.Errorf("floor p99 %v, want 7", v)
	}

	if err := os.WriteFile(filepath.Join(dir, "r3.kubeloop"), []byte("12\nfast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readPooled(dir); err == nil || !strings.Contains(err.Error(), "r3.kubeloop line 2") {
		t.Errorf("a bad line: %v, want an error naming the file and line", err)
	}
}
