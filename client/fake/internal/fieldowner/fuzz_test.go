package fieldowner

import (
	"fmt"
	"reflect"
	"testing"
)

// FuzzApply runs a sequence of applies and plain writes by three managers
// over a few fields, each step written as the fake writes it, and checks
// after each step that the table's invariant holds, that a successful
// apply leaves every field of its configuration as configured, and that a
// conflict changes nothing.
func FuzzApply(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{8, 9, 10, 11, 200, 201, 202, 17, 33, 65})
	f.Add([]byte{3, 3, 3, 131, 131, 67, 67, 255})
	fields := []string{"a", "b", "c"}
	f.Fuzz(func(t *testing.T, steps []byte) {
		var tab Table[string]
		var cur map[string]any
		for i, step := range steps {
			manager := fmt.Sprint("m", int(step)%3)
			spec := map[string]any{}
			for j, field := range fields {
				if step&(1<<(j+2)) != 0 {
					spec[field] = int64(step>>5) + int64(j)
				}
			}
			cfg := map[string]any{"metadata": map[string]any{"name": "x"}, "spec": spec}
			if step&0x80 != 0 && cur != nil { // a plain write (Update) of the spec
				next := map[string]any{"metadata": map[string]any{"name": "x"}, "spec": spec}
				tab.Wrote("x", cur, next, manager)
				cur = next
			} else {
				merged, commit, err := tab.Apply("x", cur, cfg, Request{Manager: manager, Force: step&0x40 != 0})
				if err != nil {
					if step&0x40 != 0 {
						t.Fatalf("step %d: a forced apply failed: %v", i, err)
					}
					continue
				}
				tab.Wrote("x", cur, merged, manager)
				commit()
				for field, v := range spec {
					got := merged["spec"].(map[string]any)[field]
					if !reflect.DeepEqual(got, v) {
						t.Fatalf("step %d: spec.%s is %v after %s applied %v", i, field, got, manager, v)
					}
				}
				cur = merged
			}
			if err := tab.check("x", cur); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
	})
}
