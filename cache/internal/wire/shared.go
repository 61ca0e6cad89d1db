package wire

import (
	"bytes"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// An update usually carries the labels and annotations its object already
// had. The cache then shares the stored version's maps (see the cache's
// transform), but only after the decoder has built two equal maps and
// their strings for it to drop: about half of what decoding a ConfigMap
// allocates. With a Stored, the watch decoder compares the event's label
// and annotation entries, still in the frame, with the maps of the
// version the cache holds, and when they are equal leaves the entries
// out of the decode and gives the object the stored maps. The result is
// the object the cache's transform would have made. Only informers
// without a user transform register (a user transform may modify the
// object, and so the shared maps, in place).

// Lookup returns the object an informer stores under namespace and name.
// It must not keep the strings it is given: they share the frame's bytes.
type Lookup func(namespace, name string) (any, bool)

// Stored is the stores whose objects' label and annotation maps decoded
// objects may share, by kind and the namespace an informer watches ("" for
// all). It is safe for concurrent use; the zero value is empty.
type Stored struct {
	mu   sync.Mutex
	m    atomic.Pointer[map[storedKey]*Lookup] // copy on write
	seen seenMaps
}

type storedKey struct {
	gvk       schema.GroupVersionKind
	namespace string
}

// Register makes the objects of gvk that namespace's informer ("" for
// all) stores, found by lookup, shareable; unregister undoes it (a later
// registration of the same kind and namespace stays).
func (s *Stored) Register(gvk schema.GroupVersionKind, namespace string, lookup Lookup) (unregister func()) {
	k, p := storedKey{gvk, namespace}, &lookup
	s.update(func(m map[storedKey]*Lookup) { m[k] = p })
	return func() {
		s.update(func(m map[storedKey]*Lookup) {
			if m[k] == p {
				delete(m, k)
			}
		})
	}
}

func (s *Stored) update(f func(map[storedKey]*Lookup)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := map[storedKey]*Lookup{}
	if old := s.m.Load(); old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	f(next)
	s.m.Store(&next)
}

// lookup returns the lookup of the informer that stores gvk's objects of
// namespace, or nil.
func (s *Stored) lookup(gvk schema.GroupVersionKind, namespace []byte) *Lookup {
	m := s.m.Load()
	if m == nil || len(*m) == 0 {
		return nil
	}
	// The string shares the frame's bytes, which outlive the call: the
	// map lookup does not keep it (TestFrameStringsAreNotKept).
	ns := unsafe.String(unsafe.SliceData(namespace), len(namespace))
	lookup := (*m)[storedKey{gvk, ns}]
	if lookup == nil {
		lookup = (*m)[storedKey{gvk: gvk}]
	}
	return lookup
}

// storedMeta returns the metadata of the stored version of the object
// namespace/name that lookup finds, or nil.
func storedMeta(lookup *Lookup, namespace, name []byte) *metav1.ObjectMeta {
	// The strings share the frame's bytes, which outlive the call: the
	// store's Get does not keep them (TestFrameStringsAreNotKept).
	obj, ok := (*lookup)(unsafe.String(unsafe.SliceData(namespace), len(namespace)), unsafe.String(unsafe.SliceData(name), len(name)))
	if !ok {
		return nil
	}
	if a, ok := obj.(metav1.ObjectMetaAccessor); ok {
		om, _ := a.GetObjectMeta().(*metav1.ObjectMeta)
		return om
	}
	return nil
}

// ObjectMeta's fields the sharing reads.
const (
	metaName        = 1
	metaNamespace   = 3
	metaLabels      = 11
	metaAnnotations = 12
	metaManaged     = 17
)

// span is a run of fields in a message: [from, to), from < 0 when none.
type span struct{ from, to int }

// metaLayout is where an object's metadata (field 1) and the fields of it
// the sharing reads or drops are.
type metaLayout struct {
	tag, start, end int    // the metadata field's tag, payload and end offsets in the object
	meta            []byte // its payload
	name, namespace []byte
	labels          span
	annotations     span
	managed         span
}

// layoutOf reads the layout of obj, whose metadata must be field 1, occur
// once, and hold each of labels, annotations and managedFields as one run
// (as Kubernetes' generated encoders write them: fields in number order).
func layoutOf(obj []byte) (l metaLayout, ok bool) {
	seen := false
	for i := 0; i < len(obj); {
		num, p, next, err := field(obj, i)
		if err != nil {
			return l, false
		}
		if num == 1 {
			if seen || p == nil {
				return l, false
			}
			seen = true
			l.tag, l.start, l.end, l.meta = i, next-len(p), next, p
		}
		i = next
	}
	if !seen {
		return l, false
	}
	l.labels, l.annotations, l.managed = span{-1, -1}, span{-1, -1}, span{-1, -1}
	for j := 0; j < len(l.meta); {
		num, p, next, err := field(l.meta, j)
		if err != nil {
			return l, false
		}
		var sp *span
		switch num {
		case metaName:
			l.name = p
		case metaNamespace:
			l.namespace = p
		case metaLabels:
			sp = &l.labels
		case metaAnnotations:
			sp = &l.annotations
		case metaManaged:
			sp = &l.managed
		}
		if sp != nil {
			switch {
			case sp.from < 0:
				*sp = span{j, next}
			case sp.to == j:
				sp.to = next
			default:
				return l, false
			}
		}
		j = next
	}
	return l, true
}

// sharedMaps finds the label and annotation maps of obj's stored version
// that equal obj's own, or stored maps that equal them and that this
// Stored has seen before (seenMaps). A nil map is one that is not shared.
func (s *Stored) sharedMaps(gvk schema.GroupVersionKind, l *metaLayout) (labels, annotations map[string]string) {
	if len(l.name) == 0 || l.labels.from < 0 && l.annotations.from < 0 {
		return nil, nil
	}
	lookup := s.lookup(gvk, l.namespace)
	if lookup == nil {
		return nil, nil
	}
	var labelRun, annotationRun []byte
	if l.labels.from >= 0 {
		labelRun = l.meta[l.labels.from:l.labels.to]
	}
	if l.annotations.from >= 0 {
		annotationRun = l.meta[l.annotations.from:l.annotations.to]
	}
	labels, annotations = s.seen.get(labelRun, annotationRun)
	if (labelRun == nil || labels != nil) && (annotationRun == nil || annotations != nil) {
		return labels, annotations
	}
	prev := storedMeta(lookup, l.namespace, l.name)
	if prev == nil {
		return labels, annotations
	}
	if labels == nil && labelRun != nil && equalEntries(labelRun, prev.Labels) {
		labels = prev.Labels
		s.seen.put(metaLabels, labelRun, labels)
	}
	if annotations == nil && annotationRun != nil && equalEntries(annotationRun, prev.Annotations) {
		annotations = prev.Annotations
		s.seen.put(metaAnnotations, annotationRun, annotations)
	}
	return labels, annotations
}

// seenMaps remembers stored label and annotation maps by the encoded run
// of entries they were found equal to, so that the next event carrying
// the same run gets the map without looking its object up in the store
// and comparing entry by entry. Most updates keep their labels and
// annotations, and many objects share them (a Helm release's, a
// workload's): in the steady state of bench/e2e, the store lookup and
// the comparison were about 1.5 µs of the 14 µs an event cost. A stored
// map is never modified (the cache's objects are read-only, and only
// informers without a user transform share them), so a remembered one
// stays equal to its run. Two generations of at most maxSeen runs per
// field, each of at most maxSeenRun bytes, bound the memory to 8 MiB: runs
// not seen for a generation are forgotten, and a longer run (a
// kubectl.kubernetes.io/last-applied-configuration annotation, unique to
// its object) is compared with the stored version as before.
type seenMaps struct {
	mu       sync.Mutex
	cur, old [2]map[string]map[string]string // by field (seenIndex), then run
}

// Bounds of seenMaps: the runs of a field in a generation, and the bytes
// of a run it remembers.
const (
	maxSeen    = 4096
	maxSeenRun = 512
)

// seenIndex is the index of a field's runs in seenMaps.
func seenIndex(field int) int {
	if field == metaLabels {
		return 0
	}
	return 1
}

// get returns the maps remembered for the label and annotation runs (nil
// for a run not remembered, or nil itself).
func (s *seenMaps) get(labelRun, annotationRun []byte) (labels, annotations map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if labelRun != nil {
		labels = s.getLocked(0, labelRun)
	}
	if annotationRun != nil {
		annotations = s.getLocked(1, annotationRun)
	}
	return labels, annotations
}

func (s *seenMaps) getLocked(i int, run []byte) map[string]string {
	if m, ok := s.cur[i][string(run)]; ok {
		return m
	}
	m, ok := s.old[i][string(run)]
	if ok { // seen again: keep it
		s.putLocked(i, string(run), m)
	}
	return m
}

// put remembers m, a stored map equal to run of field, unless run is
// longer than maxSeenRun.
func (s *seenMaps) put(field int, run []byte, m map[string]string) {
	if len(run) > maxSeenRun {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putLocked(seenIndex(field), string(run), m)
}

func (s *seenMaps) putLocked(i int, run string, m map[string]string) {
	if len(s.cur[i]) >= maxSeen || s.cur[i] == nil {
		s.old[i], s.cur[i] = s.cur[i], make(map[string]map[string]string)
	}
	s.cur[i][run] = m
}

// equalEntries reports whether entries, a run of one map field's entries,
// decode to a map equal to m, which is not empty. The keys must be in
// strictly increasing order, as Kubernetes' generated encoders write them,
// so that none repeats.
func equalEntries(entries []byte, m map[string]string) bool {
	if len(m) == 0 {
		return false
	}
	n := 0
	var last []byte
	for i := 0; i < len(entries); {
		_, entry, next, err := field(entries, i)
		if err != nil || entry == nil {
			return false
		}
		k, v, ok := mapEntry(entry)
		if !ok || n > 0 && bytes.Compare(last, k) >= 0 {
			return false
		}
		if pv, found := m[string(k)]; !found || pv != string(v) {
			return false
		}
		last = k
		n++
		i = next
	}
	return n == len(m)
}

// mapEntry returns the key and value of a map<string, string> entry; a
// missing one is empty, as the generated decoders read it. ok is false
// when the entry holds anything else.
func mapEntry(entry []byte) (k, v []byte, ok bool) {
	for i := 0; i < len(entry); {
		num, p, next, err := field(entry, i)
		if err != nil || p == nil || num < 1 || num > 2 {
			return nil, nil, false
		}
		if num == 1 {
			k = p
		} else {
			v = p
		}
		i = next
	}
	return k, v, true
}

// without returns obj's bytes with the given runs of its metadata left
// out (each a span of l, in increasing order or with from < 0), appended
// to buf.
func (l *metaLayout) without(obj, buf []byte, drop ...span) []byte {
	kept := len(l.meta)
	for _, d := range drop {
		if d.from >= 0 {
			kept -= d.to - d.from
		}
	}
	buf = append(buf, obj[:l.tag]...)
	buf = binary.AppendUvarint(buf, 1<<3|2)
	buf = binary.AppendUvarint(buf, uint64(kept))
	at := 0
	for _, d := range drop {
		if d.from >= 0 {
			buf = append(buf, l.meta[at:d.from]...)
			at = d.to
		}
	}
	buf = append(buf, l.meta[at:]...)
	return append(buf, obj[l.end:]...)
}
