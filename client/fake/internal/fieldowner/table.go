package fieldowner

import (
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Table holds the field owners of the objects named by K. Its zero value
// is empty and ready.
type Table[K comparable] struct {
	owners map[K]map[string]string // field path -> manager
}

// Request is one apply.
type Request struct {
	Manager string // the field manager; required
	Force   bool   // take fields other managers own instead of failing
	// Status is an apply of the status subresource: only the
	// configuration's status is applied.
	Status bool
	// StatusSubresource is set when the kind has a status subresource: an
	// apply of the object then leaves the status alone.
	StatusSubresource bool
}

func (r Request) inScope(p string) bool {
	switch {
	case r.Status:
		return isStatusPath(p)
	case r.StatusSubresource:
		return !isStatusPath(p)
	}
	return true
}

// Wrote gives manager the fields that differ between old (nil for a
// create) and cur, and forgets the owners of fields cur lacks.
func (t *Table[K]) Wrote(id K, old, cur map[string]any, manager string) {
	before, after := leaves(old), leaves(cur)
	owners := t.of(id)
	for p, v := range after {
		if w, ok := before[p]; !ok || !reflect.DeepEqual(v, w) {
			owners[p] = manager
		}
	}
	for p := range owners {
		if _, ok := after[p]; !ok {
			delete(owners, p)
		}
	}
}

// Forget drops the owners of id (a deleted object).
func (t *Table[K]) Forget(id K) { delete(t.owners, id) }

func (t *Table[K]) of(id K) map[string]string {
	if t.owners == nil {
		t.owners = map[K]map[string]string{}
	}
	if t.owners[id] == nil {
		t.owners[id] = map[string]string{}
	}
	return t.owners[id]
}

// Apply merges the apply configuration cfg into old, the stored object
// id (nil when there is none), for r. It returns the object to write
// (for a missing object, the part of cfg in the request's scope) and
// commit, which records the new owners once that write succeeded. It
// fails with a 409 conflict when cfg changes fields another manager owns
// and r.Force is not set.
func (t *Table[K]) Apply(id K, old, cfg map[string]any, r Request) (merged map[string]any, commit func(), err error) {
	switch {
	case r.Status:
		cfg = map[string]any{"metadata": cfg["metadata"], "status": cfg["status"]}
	case r.StatusSubresource:
		cfg = maps.Clone(cfg)
		delete(cfg, "status")
	}
	if old == nil {
		return cfg, func() {}, nil
	}
	want := leaves(cfg)
	if r.Status {
		for p := range want {
			if !isStatusPath(p) {
				delete(want, p) // a status apply ignores metadata, like the server
			}
		}
	}
	owners := t.owners[id]
	have := leaves(old)
	var causes []metav1.StatusCause
	for p, v := range want {
		if o := owners[p]; o != "" && o != r.Manager && !reflect.DeepEqual(have[p], v) {
			causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict,
				Message: fmt.Sprintf("conflict with %q", o), Field: dotted(p)})
		}
	}
	if len(causes) > 0 && !r.Force {
		return nil, nil, conflict(causes)
	}
	merged = runtime.DeepCopyJSON(old)
	for p, v := range want {
		setPath(merged, p, runtime.DeepCopyJSONValue(v))
	}
	var dropped []string
	for p, o := range owners {
		if _, still := want[p]; o == r.Manager && !still && r.inScope(p) && !hasBelow(want, p) {
			unsetPath(merged, p)
			dropped = append(dropped, p)
		}
	}
	return merged, func() {
		owners, after := t.of(id), leaves(merged)
		for p := range want {
			if _, ok := after[p]; ok { // an empty map merged into a full one is no field of its own
				owners[p] = r.Manager
			}
		}
		for _, p := range dropped {
			delete(owners, p)
		}
	}, nil
}

// conflict is the API server's apply conflict error for causes.
func conflict(causes []metav1.StatusCause) error {
	sort.Slice(causes, func(i, j int) bool { return causes[i].Field < causes[j].Field })
	msg := fmt.Sprintf("Apply failed with 1 conflict: %s: %s", causes[0].Message, causes[0].Field)
	if len(causes) > 1 {
		lines := make([]string, len(causes))
		for i, cause := range causes {
			lines[i] = cause.Message + ": " + cause.Field
		}
		msg = fmt.Sprintf("Apply failed with %d conflicts: %s", len(causes), strings.Join(lines, "; "))
	}
	return apierrors.NewApplyConflict(causes, msg)
}

// check returns an error when the owners of id break the table's
// invariant against obj, the object as stored after the last write: every
// owned field exists in obj and is owned by a manager with a name.
func (t *Table[K]) check(id K, obj map[string]any) error {
	have := leaves(obj)
	for p, manager := range t.owners[id] {
		if _, ok := have[p]; !ok {
			return fmt.Errorf("field %s is owned by %q but the object has no such field", dotted(p), manager)
		}
		if manager == "" {
			return fmt.Errorf("field %s has an owner without a name", dotted(p))
		}
	}
	return nil
}
