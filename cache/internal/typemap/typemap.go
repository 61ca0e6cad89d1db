// Package typemap is a map from Go types to values for a read path that
// looks a type up on every call and learns a new one rarely.
package typemap

import (
	"reflect"
	"sync"
	"sync/atomic"
)

// Map maps Go types to values; the cache maps the type of typed objects to
// the synced entry of their kind, for the start of every typed Get. A read
// is an atomic load and a scan of a short immutable snapshot (a map lookup
// past scanMax types); a write, once per type and cache, replaces the
// snapshot. The zero value is an empty map.
type Map[V any] struct {
	mu   sync.Mutex
	snap atomic.Pointer[snapshot[V]]
}

type snapshot[V any] struct {
	types  []reflect.Type
	values []V
	byType map[reflect.Type]V // set past scanMax types
}

// scanMax is the number of types scanned linearly; most operators
// read fewer kinds than this.
const scanMax = 8

// Load returns the value of typ.
func (t *Map[V]) Load(typ reflect.Type) (V, bool) {
	s := t.snap.Load()
	if s == nil {
		var zero V
		return zero, false
	}
	if s.byType != nil {
		e, ok := s.byType[typ]
		return e, ok
	}
	for i, x := range s.types {
		if x == typ {
			return s.values[i], true
		}
	}
	var zero V
	return zero, false
}

// Store sets the value of typ.
func (t *Map[V]) Store(typ reflect.Type, v V) {
	t.mu.Lock()
	defer t.mu.Unlock()
	next := &snapshot[V]{}
	if s := t.snap.Load(); s != nil {
		for i, x := range s.types {
			if x != typ {
				next.types = append(next.types, x)
				next.values = append(next.values, s.values[i])
			}
		}
	}
	next.types = append(next.types, typ)
	next.values = append(next.values, v)
	if len(next.types) > scanMax {
		next.byType = make(map[reflect.Type]V, len(next.types))
		for i, x := range next.types {
			next.byType[x] = next.values[i]
		}
	}
	t.snap.Store(next)
}

// Clear forgets every type.
func (t *Map[V]) Clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.snap.Store(nil)
}
