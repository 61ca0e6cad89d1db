//go:build kubeloop_maptable

package store

import (
	"hash/maphash"
	"unsafe"
)

// nameTable, built with -tags kubeloop_maptable, is a plain Go map of one
// namespace's objects by name, with the same methods as the hand-written
// table in table.go. It exists to measure what that table buys:
// bench/cache BenchmarkStoreFloor and BenchmarkCacheRead run with and
// without the tag (BENCHMARKS.md, "store: table or map").
type nameTable struct{ m map[string]unsafe.Pointer }

func newNameTable(_ maphash.Seed, n int) *nameTable {
	return &nameTable{m: make(map[string]unsafe.Pointer, n)}
}

func (t *nameTable) len() int {
	if t == nil {
		return 0
	}
	return len(t.m)
}

func (t *nameTable) get(name string) (unsafe.Pointer, bool) {
	if t == nil {
		return nil, false
	}
	p, ok := t.m[name]
	return p, ok
}

func (t *nameTable) put(name string, obj unsafe.Pointer) (old unsafe.Pointer, existed bool) {
	old, existed = t.m[name]
	t.m[name] = obj
	return old, existed
}

func (t *nameTable) delete(name string) (old unsafe.Pointer, ok bool) {
	old, ok = t.m[name]
	delete(t.m, name)
	return old, ok
}

func (t *nameTable) each(f func(name string, obj unsafe.Pointer) bool) bool {
	for name, p := range t.m {
		if !f(name, p) {
			return false
		}
	}
	return true
}
