// Package store holds the objects of one informer: by namespace and name,
// with secondary indexes. It is the cache's only store: Get reads it by
// namespace and name, List walks a namespace (or everything) or an index.
//
// Why not client-go's Indexer: it keys objects by a "namespace/name"
// string built and kept for every object, and keeps the namespace index as
// a second map of those keys. Here the objects sit in one table per
// namespace, so a Get builds no key (see nameTable), and the namespace
// index costs nothing: it is the per-namespace table itself. Other indexes
// are kept as client-go keeps them: index value to keys.
package store

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Key names an object in a Store: its namespace ("" when cluster-scoped)
// and name.
type Key struct{ Namespace, Name string }

// String returns the key in client-go's form: "namespace/name", or "name".
func (k Key) String() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// KeyOf returns the key of an object with metadata.
func KeyOf(obj any) (Key, error) {
	if o, ok := obj.(metav1.Object); ok {
		return Key{o.GetNamespace(), o.GetName()}, nil
	}
	o, err := meta.Accessor(obj)
	if err != nil {
		return Key{}, fmt.Errorf("cache: object %T has no metadata: %w", obj, err)
	}
	return Key{o.GetNamespace(), o.GetName()}, nil
}

// IndexFunc returns the values under which an index files obj, as
// client-go's IndexFunc does.
type IndexFunc func(obj any) ([]string, error)

// Store is the objects of one informer. Every object is a non-nil pointer
// of one Go type, the first one stored. It is safe for concurrent use; the
// functions Each and ByIndex call run under its read lock and must not
// call back into it.
type Store struct {
	mu       sync.RWMutex
	typ      reflect.Type // the pointer type of every object, from the first stored
	elem     reflect.Type // typ's element type
	seed     maphash.Seed
	byNS     map[string]*nameTable // namespace ("" when cluster-scoped) -> objects by name
	count    int
	indexers map[string]IndexFunc
	indices  map[string]map[string]map[Key]struct{} // index -> value -> keys
	recent   [recentSize]recent                     // the last objects Put, newest at recentAt-1
	recentAt int
	detect   *detector // nil unless DetectMutations (mutation.go)
}

// A controller reads the object an event brought in as soon as its worker
// gets the event's key, microseconds after the informer stored it. On a
// large cache a Get waits for two cache misses in the name table (the
// slot's group, then the name); the objects Put last are kept aside, in a
// few entries compared before the table (a request built from the object
// shares its name string, so a hit compares no name bytes). In the steady
// state of bench/e2e the reconcile's lookup went from 0.62 to 0.42 µs per
// event (CPU profiles); a Get that misses scans the 8 entries first.
const recentSize = 8

// recent is an object Put last and its key.
type recent struct {
	namespace, name string
	p               unsafe.Pointer // nil: none
}

// New returns an empty store without indexes.
func New() *Store {
	return &Store{
		seed:     maphash.MakeSeed(),
		byNS:     map[string]*nameTable{},
		indexers: map[string]IndexFunc{},
		indices:  map[string]map[string]map[Key]struct{}{},
	}
}

// Get returns the object named by namespace and name.
func (s *Store) Get(namespace, name string) (any, bool) {
	s.mu.RLock()
	p, ok := s.recentGet(namespace, name)
	if !ok {
		p, ok = s.byNS[namespace].get(name)
	}
	s.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return s.object(p), true
}

// Stored returns the object named by namespace and name, as Get does,
// without first looking among the last objects Put: for a caller about to
// replace the object (the informer's apply), which was seldom among the
// last few Put when many objects change, so that the look among them
// (about 380 instructions, BenchmarkApply) would be spent for nothing.
func (s *Store) Stored(namespace, name string) (any, bool) {
	s.mu.RLock()
	p, ok := s.byNS[namespace].get(name)
	s.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return s.object(p), true
}

// recentGet finds an object among the last ones Put, newest first. The
// caller holds s.mu.
func (s *Store) recentGet(namespace, name string) (unsafe.Pointer, bool) {
	for i := range recentSize {
		r := &s.recent[(s.recentAt-1-i+recentSize)%recentSize]
		if r.p != nil && r.name == name && r.namespace == namespace {
			return r.p, true
		}
	}
	return nil, false
}

// Len returns the number of objects.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.count
}

// Put stores obj under k, replacing the object stored there. An index
// function's error is returned after obj is stored, as client-go's Indexer
// does, and leaves that index without obj's new values.
func (s *Store) Put(k Key, obj any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pointer(obj)
	if err != nil {
		return err
	}
	objs := s.byNS[k.Namespace]
	if objs == nil {
		objs = newNameTable(s.seed, 1)
		s.byNS[k.Namespace] = objs
	}
	oldP, existed := objs.put(k.Name, p)
	s.recent[s.recentAt] = recent{k.Namespace, k.Name, p}
	s.recentAt = (s.recentAt + 1) % recentSize
	var old any
	if existed {
		old = s.object(oldP)
	} else {
		s.count++
		oldP = nil
	}
	if s.detect != nil {
		s.detect.stored(s, k, p, oldP, obj)
	}
	return s.updateIndices(k, old, obj)
}

// Delete removes the object stored under k, if any. An index function's
// error is returned after the object is removed.
func (s *Store) Delete(k Key) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	objs := s.byNS[k.Namespace]
	if objs == nil {
		return nil
	}
	oldP, ok := objs.delete(k.Name)
	if !ok {
		return nil
	}
	for i := range s.recent {
		if r := &s.recent[i]; r.p != nil && r.name == k.Name && r.namespace == k.Namespace {
			*r = recent{}
		}
	}
	if objs.len() == 0 {
		delete(s.byNS, k.Namespace)
	}
	s.count--
	if s.detect != nil {
		s.detect.left(s, oldP)
	}
	return s.updateIndices(k, s.object(oldP), nil)
}

// Each calls f for every object of namespace ("" for every object) until
// f returns false. f must not keep k.Name, which shares the table's bytes.
func (s *Store) Each(namespace string, f func(k Key, obj any) bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if namespace != "" {
		s.eachIn(namespace, s.byNS[namespace], f)
		return
	}
	for ns, objs := range s.byNS {
		if !s.eachIn(ns, objs, f) {
			return
		}
	}
}

// eachIn calls f for every object of objs, which may be nil, and reports
// whether f never returned false. The caller holds s.mu.
func (s *Store) eachIn(ns string, objs *nameTable, f func(k Key, obj any) bool) bool {
	if objs == nil {
		return true
	}
	return objs.each(func(name string, p unsafe.Pointer) bool { return f(Key{ns, name}, s.object(p)) })
}

// Objects returns every object in the order of their addresses. A caller
// that visits each of them (an informer handing its objects to a new
// handler, a resync) then reads memory in about the order the decoder
// allocated it, where hash order scatters its reads over the whole heap.
// On a cold start with 1M ConfigMaps (bench/e2e BenchmarkColdStart),
// handing the objects to a controller's handler took 1.5-2.0 s instead of
// 2.5-2.6 s, and the reconciles that follow in the same order 2.9-3.4 s
// instead of 3.7-4.3 s; the sort costs about 0.1 s of that
// (BENCHMARKS-perf.md).
func (s *Store) Objects() []any {
	s.mu.RLock()
	ps := make([]unsafe.Pointer, 0, s.count)
	for _, objs := range s.byNS {
		objs.each(func(_ string, p unsafe.Pointer) bool {
			ps = append(ps, p)
			return true
		})
	}
	elem := s.elem
	s.mu.RUnlock()
	slices.SortFunc(ps, func(a, b unsafe.Pointer) int { return cmp.Compare(uintptr(a), uintptr(b)) })
	out := make([]any, len(ps))
	for i, p := range ps {
		out[i] = reflect.NewAt(elem, p).Interface()
	}
	return out
}

// ByIndex calls f for every object that index files under value, until f
// returns false. An index that does not exist is an error.
func (s *Store) ByIndex(index, value string, f func(obj any) bool) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	idx, ok := s.indices[index]
	if !ok {
		return fmt.Errorf("cache: index %q does not exist", index)
	}
	for k := range idx[value] {
		if p, ok := s.byNS[k.Namespace].get(k.Name); ok && !f(s.object(p)) {
			return nil
		}
	}
	return nil
}

// IndexFunc returns the function of index.
func (s *Store) IndexFunc(index string) (IndexFunc, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	fn, ok := s.indexers[index]
	return fn, ok
}

// AddIndexes adds indexes and files the stored objects under them. A name
// already in use is an error, and then nothing is added.
func (s *Store) AddIndexes(indexers map[string]IndexFunc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var taken []string
	for name := range indexers {
		if _, ok := s.indexers[name]; ok {
			taken = append(taken, name)
		}
	}
	if len(taken) > 0 {
		return fmt.Errorf("cache: indexer conflict: %s", strings.Join(taken, ", "))
	}
	var errs []error
	for name, fn := range indexers {
		index := map[string]map[Key]struct{}{}
		for _, objs := range s.byNS {
			s.eachIn("", objs, func(_ Key, obj any) bool {
				k, err := KeyOf(obj) // the object's own strings, not the table's
				if err == nil {
					var values []string
					values, err = fn(obj)
					for _, v := range values {
						indexAdd(index, v, k)
					}
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("index %q: %w", name, err))
				}
				return true
			})
		}
		s.indexers[name] = fn
		s.indices[name] = index
	}
	return errors.Join(errs...)
}

// updateIndices moves k from old's index values to obj's; either may be
// nil. The caller holds s.mu for writing.
func (s *Store) updateIndices(k Key, old, obj any) error {
	var errs []error
	for name, fn := range s.indexers {
		var oldValues, newValues []string
		var err error
		if old != nil {
			if oldValues, err = fn(old); err != nil {
				errs = append(errs, fmt.Errorf("index %q: %w", name, err))
			}
		}
		if obj != nil {
			if newValues, err = fn(obj); err != nil {
				errs = append(errs, fmt.Errorf("index %q: %w", name, err))
			}
		}
		if len(oldValues) == 1 && len(newValues) == 1 && oldValues[0] == newValues[0] {
			continue // the common update: nothing moves
		}
		index := s.indices[name]
		for _, v := range oldValues {
			if set := index[v]; set != nil {
				delete(set, k)
				if len(set) == 0 {
					delete(index, v)
				}
			}
		}
		for _, v := range newValues {
			indexAdd(index, v, k)
		}
	}
	return errors.Join(errs...)
}

// indexAdd files k under value v of index.
func indexAdd(index map[string]map[Key]struct{}, v string, k Key) {
	set := index[v]
	if set == nil {
		set = map[Key]struct{}{}
		index[v] = set
	}
	set[k] = struct{}{}
}

// Size is what a store holds of one namespace: the exact number of
// objects and an estimate of their size as JSON.
type Size struct {
	Namespace string
	Objects   int
	Bytes     int64
}

// Sizes returns one Size per namespace that has objects. Bytes is the mean
// JSON size of up to perNamespace objects of the namespace times their
// number; past a budget of total encoded objects in all, a namespace gets
// the mean of those encoded. The read lock is held only to count and to
// pick the sample: stored objects are never modified (a change stores a
// new object), so they are encoded after it is released.
func (s *Store) Sizes(perNamespace, total int) []Size {
	samples := s.samples(perNamespace, total)
	out := make([]Size, len(samples))
	var sum, measured int64
	sizes := make([]int64, len(samples))
	for i, sm := range samples {
		for _, obj := range sm.objects {
			sizes[i] += jsonSize(obj)
		}
		sum += sizes[i]
		measured += int64(len(sm.objects))
	}
	for i, sm := range samples {
		out[i] = Size{Namespace: sm.namespace, Objects: sm.count}
		switch {
		case len(sm.objects) > 0:
			out[i].Bytes = sizes[i] * int64(sm.count) / int64(len(sm.objects))
		case measured > 0: // past the budget
			out[i].Bytes = sum * int64(sm.count) / measured
		}
	}
	return out
}

// sample is the number of objects of one namespace and a few of them.
type sample struct {
	namespace string
	count     int
	objects   []any
}

// samples counts the objects of every namespace and picks up to
// perNamespace of each, at most total in all, under the read lock.
func (s *Store) samples(perNamespace, total int) []sample {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]sample, 0, len(s.byNS))
	for ns, objs := range s.byNS {
		n := objs.len()
		if n == 0 {
			continue
		}
		k := min(n, perNamespace, total)
		total -= k
		sm := sample{namespace: ns, count: n, objects: make([]any, 0, k)}
		if k > 0 {
			objs.each(func(_ string, p unsafe.Pointer) bool {
				sm.objects = append(sm.objects, s.object(p))
				return len(sm.objects) < k
			})
		}
		out = append(out, sm)
	}
	return out
}

// jsonSize returns the length of obj's JSON encoding, 0 if it has none.
func jsonSize(obj any) int64 {
	var w byteCounter
	if err := json.NewEncoder(&w).Encode(obj); err != nil {
		return 0
	}
	return int64(w) - 1 // Encode ends with a newline
}

// byteCounter is an io.Writer that counts what it is given.
type byteCounter int64

func (c *byteCounter) Write(p []byte) (int, error) {
	*c += byteCounter(len(p))
	return len(p), nil
}
