//go:build !kubeloop_maptable

package store

import (
	"hash/maphash"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestNameTableMatchesMap applies random puts and deletes to a nameTable
// and to a Go map and compares every read after each change. The names
// include the empty name and names long enough for a two-byte length
// prefix; the phases grow the table, empty it (shrink rebuilds) and churn
// it (garbage rebuilds).
func TestNameTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tab := newNameTable(maphash.MakeSeed(), 1)
	want := map[string]unsafe.Pointer{}
	name := func(i int) string {
		switch i % 7 {
		case 0:
			return ""
		case 1:
			return strings.Repeat("x", 130+i%200) + strconv.Itoa(i)
		}
		return "obj-" + strconv.Itoa(i)
	}
	check := func(step int) {
		t.Helper()
		if tab.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, tab.len(), len(want))
		}
		seen := 0
		tab.each(func(n string, obj unsafe.Pointer) bool {
			seen++
			if w, ok := want[n]; !ok || obj != w {
				t.Fatalf("step %d: each gave %q=%v, want %v (present %v)", step, n, obj, w, ok)
			}
			return true
		})
		if seen != len(want) {
			t.Fatalf("step %d: each gave %d objects, want %d", step, seen, len(want))
		}
	}
	step := 0
	phase := func(ops, keys int, putShare float64) {
		for range ops {
			step++
			n := name(rng.IntN(keys))
			if rng.Float64() < putShare {
				obj := unsafe.Pointer(new(int))
				old, existed := tab.put(n, obj)
				w, had := want[n]
				if existed != had || (had && old != w) {
					t.Fatalf("step %d: put %q replaced %v,%v, want %v,%v", step, n, old, existed, w, had)
				}
				want[n] = obj
			} else {
				old, ok := tab.delete(n)
				w, had := want[n]
				if ok != had || (had && old != w) {
					t.Fatalf("step %d: delete %q gave %v,%v, want %v,%v", step, n, old, ok, w, had)
				}
				delete(want, n)
			}
			probe := name(rng.IntN(keys + 10)) // sometimes a name never stored
			got, ok := tab.get(probe)
			w, had := want[probe]
			if ok != had || (had && got != w) {
				t.Fatalf("step %d: get %q = %v,%v, want %v,%v", step, probe, got, ok, w, had)
			}
			if step%97 == 0 {
				check(step)
			}
		}
		check(step)
	}
	phase(3000, 2000, 0.9)  // grow
	phase(4000, 2000, 0.05) // empty out: shrink rebuilds
	phase(20000, 300, 0.5)  // churn: tombstones and garbage
	if tab.garbage > 4096 && 2*tab.garbage > len(tab.names) {
		t.Fatalf("names are %d bytes of which %d garbage after churn", len(tab.names), tab.garbage)
	}
	if slots := len(tab.groups) * groupSlots; tab.live > 0 && slots > 16*tab.live {
		t.Fatalf("%d slots for %d objects", slots, tab.live)
	}
}

// TestNameTableNamesOutliveRebuild checks that the names each hands out
// keep their value when the table rebuilds and takes more names.
func TestNameTableNamesOutliveRebuild(t *testing.T) {
	tab := newNameTable(maphash.MakeSeed(), 1)
	for i := range 10 {
		tab.put("a-"+strconv.Itoa(i), unsafe.Pointer(&i))
	}
	var names []string
	tab.each(func(n string, _ unsafe.Pointer) bool { names = append(names, n); return true })
	before := strings.Join(names, ",")
	for i := range 5000 {
		tab.put("b-"+strconv.Itoa(i), unsafe.Pointer(&i))
	}
	for i := range 5000 {
		tab.delete("b-" + strconv.Itoa(i))
	}
	if after := strings.Join(names, ","); after != before {
		t.Fatalf("names changed under rebuilds: %s, want %s", after, before)
	}
}

// TestNilNameTable checks the reads the store makes of a namespace it has
// no table for.
func TestNilNameTable(t *testing.T) {
	var tab *nameTable
	if obj, ok := tab.get("x"); ok || obj != nil {
		t.Fatalf("get on a nil table = %v, %v", obj, ok)
	}
	if n := tab.len(); n != 0 {
		t.Fatalf("len of a nil table = %d", n)
	}
}
