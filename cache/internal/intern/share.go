package intern

import (
	"encoding/binary"
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
	if len(t.cur) >= genSize {
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

	podMu sync.Mutex // guards res, enc and buf, held for all of one Pod
	res   table[corev1.ResourceList]
	enc   table[encoded]
	buf   []byte

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

func (s *sharer) init() {
	s.seed = maphash.MakeSeed()
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
	// A list of known names only is hashed by looking them up; else by
	// ranging over it. Both hash an entry alike.
	h := uint64(len(l))
	var known [len(knownResources)]bool
	n := 0
	for i, name := range knownResources {
		if q, ok := l[name]; ok {
			h += mix(s.knownHashes[i], quantityHash(q))
			known[i] = true
			n++
		}
	}
	byRange := n != len(l)
	if byRange {
		h = uint64(len(l))
		for name, q := range l {
			h += mix(maphash.String(s.seed, string(name)), quantityHash(q))
		}
	}
	c, found := s.res.get(h)
	if !found {
		s.res.put(h, l)
		return l
	}
	if len(c) != len(l) {
		return l
	}
	if byRange {
		if equalResources(c, l) {
			return c
		}
		return l
	}
	for i, name := range knownResources {
		if known[i] {
			qc, ok := c[name]
			if !ok || !equalQuantity(qc, l[name]) {
				return l
			}
		}
	}
	return c
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

// marshaler is a k8s.io/api type's generated protobuf encoding.
type marshaler interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// Tags of the types shared by encoding, the first byte of every key.
const (
	tagProbe byte = iota + 1
	tagSecurityContext
	tagLifecycle
	tagEnv
	tagEnvFrom
	tagPorts
	tagArgs
	tagCommand
	tagProjected
	tagConfigMapVolume
	tagSecretVolume
	tagDownwardAPIVolume
	tagTolerations
	tagAffinity
	tagPodSecurityContext
	tagDNSConfig
	tagTopologySpread
	tagImagePullSecrets
	tagReadinessGates
)

// appendEncoding appends m's encoding, preceded by its length, to s.buf;
// false when it would not fit in maxShareBytes or does not encode. The
// caller holds s.podMu.
func (s *sharer) appendEncoding(m marshaler) bool {
	n := m.Size()
	if len(s.buf)+binary.MaxVarintLen64+n > maxShareBytes {
		return false
	}
	s.buf = binary.AppendUvarint(s.buf, uint64(n))
	at := len(s.buf)
	s.buf = append(s.buf, make([]byte, n)...)
	w, err := m.MarshalToSizedBuffer(s.buf[at:])
	return err == nil && w == n
}

// find returns the shared value whose key is in s.buf, and whether there
// is one. Without one, remember(h, v) makes v the shared value. The caller
// holds s.podMu.
func (s *sharer) find() (v any, found bool, h uint64) {
	h = hashBytes(s, s.buf)
	if e, ok := s.enc.get(h); ok {
		if e.key == string(s.buf) {
			return e.v, true, h
		}
		return nil, true, h // a collision: share neither
	}
	return nil, false, h
}

// remember records v as the shared value of the key in s.buf, hashed h.
func (s *sharer) remember(h uint64, v any) {
	s.enc.put(h, encoded{key: string(s.buf), v: v})
}

func hashBytes(s *sharer, b []byte) uint64 { return maphash.Bytes(s.seed, b) }

// sharePtr returns the shared *T that encodes as p does, p if none.
func sharePtr[T any, P interface {
	*T
	marshaler
}](s *sharer, tag byte, p P) P {
	if p == nil {
		return nil
	}
	s.buf = append(s.buf[:0], tag)
	if !s.appendEncoding(p) {
		return p
	}
	c, found, h := s.find()
	if !found {
		s.remember(h, p)
		return p
	}
	if c, ok := c.(P); ok {
		return c
	}
	return p
}

// shareSlice returns the shared slice whose elements encode as xs's do,
// xs if none. A shared slice's capacity is its length, so an append to it
// copies.
func shareSlice[T any, P interface {
	*T
	marshaler
}](s *sharer, tag byte, xs []T) []T {
	if len(xs) == 0 {
		return xs
	}
	s.buf = append(s.buf[:0], tag)
	for i := range xs {
		if !s.appendEncoding(P(&xs[i])) {
			return xs
		}
	}
	c, found, h := s.find()
	if !found {
		xs = xs[:len(xs):len(xs)]
		s.remember(h, xs)
		return xs
	}
	if c, ok := c.([]T); ok {
		return c
	}
	return xs
}

// shareStrings is shareSlice for a list of strings (args, command).
func (s *sharer) shareStrings(tag byte, xs []string) []string {
	if len(xs) == 0 {
		return xs
	}
	s.buf = append(s.buf[:0], tag)
	for _, x := range xs {
		if len(s.buf)+binary.MaxVarintLen64+len(x) > maxShareBytes {
			return xs
		}
		s.buf = binary.AppendUvarint(s.buf, uint64(len(x)))
		s.buf = append(s.buf, x...)
	}
	c, found, h := s.find()
	if !found {
		xs = xs[:len(xs):len(xs)]
		s.remember(h, xs)
		return xs
	}
	if c, ok := c.([]string); ok {
		return c
	}
	return xs
}

// pod replaces the sub-structures of p that the replicas of a workload
// repeat by shared ones: per container its resources, environment, ports,
// arguments, probes, security context and lifecycle; the sources of its
// projected, ConfigMap, Secret and downward API volumes (not the volumes,
// whose names often differ per Pod: kube-api-access-<random>); and its
// tolerations, affinity, security context, DNS config, spread
// constraints, pull secrets, readiness gates and node selector. It writes
// only to p's own fields, never into a shared value. Volume mounts and the
// status are left alone: they usually differ per Pod.
//
// Equality is that of the protobuf encoding, the form the API server
// serves built-in kinds in: two values that encode the same are the same
// object to the API (an empty list decoded from JSON and an absent one are
// not told apart).
func (s *sharer) pod(p *corev1.Pod) {
	sp := &p.Spec
	s.podMu.Lock()
	defer s.podMu.Unlock()
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		cs.AllocatedResources = s.resourceList(cs.AllocatedResources)
		if r := cs.Resources; r != nil {
			r.Limits = s.resourceList(r.Limits)
			r.Requests = s.resourceList(r.Requests)
		}
	}
	for _, cs := range [][]corev1.Container{sp.InitContainers, sp.Containers} {
		for i := range cs {
			c := &cs[i]
			c.Resources.Limits = s.resourceList(c.Resources.Limits)
			c.Resources.Requests = s.resourceList(c.Resources.Requests)
			c.Env = shareSlice(s, tagEnv, c.Env)
			c.EnvFrom = shareSlice(s, tagEnvFrom, c.EnvFrom)
			c.Ports = shareSlice(s, tagPorts, c.Ports)
			c.Args = s.shareStrings(tagArgs, c.Args)
			c.Command = s.shareStrings(tagCommand, c.Command)
			c.LivenessProbe = sharePtr(s, tagProbe, c.LivenessProbe)
			c.ReadinessProbe = sharePtr(s, tagProbe, c.ReadinessProbe)
			c.StartupProbe = sharePtr(s, tagProbe, c.StartupProbe)
			c.SecurityContext = sharePtr(s, tagSecurityContext, c.SecurityContext)
			c.Lifecycle = sharePtr(s, tagLifecycle, c.Lifecycle)
		}
	}
	for i := range sp.Volumes {
		v := &sp.Volumes[i].VolumeSource
		v.Projected = sharePtr(s, tagProjected, v.Projected)
		v.ConfigMap = sharePtr(s, tagConfigMapVolume, v.ConfigMap)
		v.Secret = sharePtr(s, tagSecretVolume, v.Secret)
		v.DownwardAPI = sharePtr(s, tagDownwardAPIVolume, v.DownwardAPI)
	}
	sp.Tolerations = shareSlice(s, tagTolerations, sp.Tolerations)
	sp.Affinity = sharePtr(s, tagAffinity, sp.Affinity)
	sp.SecurityContext = sharePtr(s, tagPodSecurityContext, sp.SecurityContext)
	sp.DNSConfig = sharePtr(s, tagDNSConfig, sp.DNSConfig)
	sp.TopologySpreadConstraints = shareSlice(s, tagTopologySpread, sp.TopologySpreadConstraints)
	sp.ImagePullSecrets = shareSlice(s, tagImagePullSecrets, sp.ImagePullSecrets)
	sp.ReadinessGates = shareSlice(s, tagReadinessGates, sp.ReadinessGates)
}
