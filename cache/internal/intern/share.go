package intern

import (
	"hash/maphash"
	"maps"
	"math/bits"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Sharing bounds. A table keeps two generations of genSize entries: a
// lookup that finds an entry in the older one moves it to the newer, and
// when the newer is full the older is dropped. So an entry still in use
// survives, high-cardinality values (a label unique per object) cannot
// grow a table without bound, and what a table keeps alive once the
// objects that used it are gone is at most 2*genSize values of at most
// maxShareBytes of encoding (or of keys and values, for string maps).
const (
	genSize       = 1 << 11
	maxShareBytes = 4 << 10
)

// table is one generational table of shared values by hash. A hash
// collision between different values shares neither with the other: the
// caller verifies that what it found equals what it has.
type table[V any] struct {
	cur, old map[uint64]V
	gen      int // entries per generation; 0 means genSize
}

func (t *table[V]) get(h uint64) (V, bool) {
	if v, ok := t.cur[h]; ok {
		return v, true
	}
	if v, ok := t.old[h]; ok {
		t.put(h, v)
		return v, true
	}
	var zero V
	return zero, false
}

func (t *table[V]) put(h uint64, v V) {
	gen := t.gen
	if gen == 0 {
		gen = genSize
	}
	if len(t.cur) >= gen {
		t.old, t.cur = t.cur, nil
	}
	if t.cur == nil {
		t.cur = make(map[uint64]V, 64)
	}
	t.cur[h] = v
}

func (t *table[V]) len() int { return len(t.cur) + len(t.old) }

// sharer holds the tables of values shared between objects: string maps
// (labels, annotations, node selectors) by content, resource lists by
// quantity, and Pod sub-structures by their protobuf encoding. Shared
// values are never modified: every object that holds one must be treated
// as read-only, which the cache already requires of what it stores.
type sharer struct {
	seed maphash.Seed

	mu   sync.Mutex // guards maps
	maps table[map[string]string]

	podMu     sync.Mutex // guards res, enc, templates, buf, walk and eq, held for all of one Pod
	res       table[corev1.ResourceList]
	enc       table[encoded]
	templates table[*template]
	buf       []byte
	walk      podWalk
	eq        equality

	// intern returns a copy of a string map with its keys and values
	// interned.
	intern func(map[string]string) map[string]string

	// knownHashes are the hashes of knownResources' names.
	knownHashes [len(knownResources)]uint64
}

// knownResources are the names nearly every resource list is made of: a
// list of only these is hashed and compared by looking them up, without
// ranging over the map, which costs more than the lookups on a map this
// small.
var knownResources = [...]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage}

// encoded is a value shared by its protobuf encoding (tagged with the
// Go type it is, so values of different types never match).
type encoded struct {
	key string
	v   any
}

func (s *sharer) init(intern func(map[string]string) map[string]string) {
	s.seed = maphash.MakeSeed()
	s.intern = intern
	for i, name := range knownResources {
		s.knownHashes[i] = maphash.String(s.seed, string(name))
	}
}

// mix folds the hashes of a key and its value into one entry's hash;
// entries are summed, so the order of a map's iteration does not matter.
func mix(k, v uint64) uint64 {
	h := k ^ bits.RotateLeft64(v*0x9e3779b97f4a7c15, 31)
	h ^= h >> 29
	return h * 0xbf58476d1ce4e5b9
}

// maxCollected is the size of the largest map whose entries hashStrings
// keeps for the comparison (most label and annotation maps are smaller).
const maxCollected = 8

type entries struct {
	n  int
	kv [maxCollected][2]string
}

// hashStrings returns the hash of m's contents, or false when m is too
// large to be worth sharing (a kubectl last-applied-configuration
// annotation, say), stopping as soon as that is known. It keeps m's
// entries in e if they fit, for equalStrings.
func (s *sharer) hashStrings(m map[string]string, e *entries) (uint64, bool) {
	n := 0
	h := uint64(len(m))
	e.n = 0
	for k, v := range m {
		if n += len(k) + len(v); n > maxShareBytes {
			return 0, false
		}
		h += mix(maphash.String(s.seed, k), maphash.String(s.seed, v))
		if e.n < maxCollected {
			e.kv[e.n] = [2]string{k, v}
			e.n++
		}
	}
	return h, true
}

// equalStrings reports whether c equals m, whose entries hashStrings kept
// in e: by lookups in c, without ranging over either map if they all fit.
func equalStrings(c, m map[string]string, e *entries) bool {
	if len(c) != len(m) {
		return false
	}
	if len(m) > e.n {
		return maps.Equal(c, m)
	}
	for _, kv := range e.kv[:e.n] {
		if v, ok := c[kv[0]]; !ok || v != kv[1] {
			return false
		}
	}
	return true
}

// stringMap returns the shared map equal to m, or the one build returns
// (which must equal m), remembered for the next objects.
func (s *sharer) stringMap(m map[string]string, build func() map[string]string) map[string]string {
	var e entries
	h, ok := s.hashStrings(m, &e)
	if !ok {
		return build()
	}
	s.mu.Lock()
	c, found := s.maps.get(h)
	s.mu.Unlock()
	if found {
		// c is never modified once in the table: comparing it unlocked is
		// safe.
		if equalStrings(c, m, &e) {
			return c
		}
		return build()
	}
	out := build()
	s.mu.Lock()
	s.maps.put(h, out)
	s.mu.Unlock()
	return out
}

// resourceList returns the shared list equal to l: the same resource
// names with quantities of equal value and format, which serialize the
// same. l itself becomes the shared one when there is none. The caller
// holds s.podMu.
func (s *sharer) resourceList(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 {
		return l
	}
	h := s.hashResources(l)
	c, found := s.res.get(h)
	if !found {
		s.res.put(h, l)
		return l
	}
	if equalResourceList(c, l) {
		return c
	}
	return l
}

// hashResources returns the hash of l's names and quantities. A list of
// known names only is hashed by looking them up, else by ranging over it;
// both hash an entry alike.
func (s *sharer) hashResources(l corev1.ResourceList) uint64 {
	h := uint64(len(l))
	n := 0
	for i, name := range knownResources {
		if q, ok := l[name]; ok {
			h += mix(s.knownHashes[i], quantityHash(q))
			n++
		}
	}
	if n == len(l) {
		return h
	}
	h = uint64(len(l))
	for name, q := range l {
		h += mix(maphash.String(s.seed, string(name)), quantityHash(q))
	}
	return h
}

// equalResourceList reports whether c and l hold the same names with
// quantities of equal value and format: by looking up the known names if l
// has no others.
func equalResourceList(c, l corev1.ResourceList) bool {
	if len(c) != len(l) {
		return false
	}
	n := 0
	for _, name := range knownResources {
		if q, ok := l[name]; ok {
			qc, ok := c[name]
			if !ok || !equalQuantity(qc, q) {
				return false
			}
			n++
		}
	}
	return n == len(l) || equalResources(c, l)
}

// quantityHash hashes q's value and format. MilliValue works on the copy:
// it neither caches nor converts anything in the list. Equal quantities
// have equal milli-values; the rest is checked by equalQuantity.
func quantityHash(q resource.Quantity) uint64 {
	return uint64(q.MilliValue())*0x9e3779b97f4a7c15 ^ uint64(len(q.Format))
}

// equalQuantity reports whether a and b have the same value and format,
// and so serialize the same. Cmp works on the copies: it may convert them
// to inf.Dec form.
func equalQuantity(a, b resource.Quantity) bool {
	return a.Format == b.Format && a.Cmp(b) == 0
}

func equalResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, qa := range a {
		qb, ok := b[name]
		if !ok || !equalQuantity(qa, qb) {
			return false
		}
	}
	return true
}
