package intern

import (
	"encoding/binary"
	"hash/maphash"
	"maps"
	"reflect"
	"slices"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// How a Pod's sub-structures are shared. Each shareable field of a Pod is
// a slot, visited in a fixed order by podWalk.run. The Pods of one
// controller (a ReplicaSet, StatefulSet, DaemonSet, Job) are made from one
// template, so the values the first of them left (its template, found by
// the controller's UID) are what the next one's slots most likely equal:
// each slot is compared with the template's (equality, field by field) and
// takes the template's value when equal. A slot that differs, and every
// slot of a Pod without a template, is shared on its own by its key in the
// table of values by encoding: the field's protobuf encoding, or for
// resource lists and the node selector their own tables. That way what
// different workloads repeat (tolerations, the token volume's sources,
// probes) is still shared, at the cost of encoding it.

// marshaler is a k8s.io/api type's generated protobuf encoding.
type marshaler interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// Tags of the slots, the first byte of each slot's key; absent is or'ed
// in for a nil or empty field.
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

	absent byte = 0x80
)

// template is what the slots of the first Pod of a controller were
// shared as.
type template struct {
	owner  string   // the controller's UID
	header [4]int   // the Pod's lengths that decide its slots, see header
	vals   []any    // by slot
	eqs    []eqFunc // by slot, for pointers and lists of structs
}

// header returns the lengths of p's lists that decide its slots: run
// loops over nothing else, so two Pods of one header have the same slots
// in the same order (TestHeaderDecidesSlots), and a template is used only
// for a Pod of its header.
func header(p *corev1.Pod) [4]int {
	return [4]int{len(p.Spec.InitContainers), len(p.Spec.Containers), len(p.Spec.Volumes), len(p.Status.ContainerStatuses)}
}

// controllerUID returns the UID of p's controller, else of its first
// owner, else "".
func controllerUID(p *corev1.Pod) string {
	refs := p.OwnerReferences
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			return string(r.UID)
		}
	}
	if len(refs) > 0 {
		return string(refs[0].UID)
	}
	return ""
}

type walkMode uint8

const (
	keying  walkMode = iota // write each slot's key into s.buf
	perSlot                 // share each slot by its key, recording the results
	match                   // take the template's value where equal, else share by key
)

// seg is a slot's key in s.buf; ok if the slot can be shared on its own.
type seg struct {
	start, end int
	ok         bool
}

// podWalk is one walk over a Pod's slots. It lives in the sharer and is
// used under s.podMu.
type podWalk struct {
	s    *sharer
	mode walkMode
	slot int
	segs []seg
	vals []any    // match: the template's; perSlot: the results
	eqs  []eqFunc // the same, of the slots compared by equality
}

func (w *podWalk) next() int {
	w.slot++
	return w.slot - 1
}

// keyed records the slot whose key starts at start; shareable says
// whether it may be shared on its own.
func (w *podWalk) keyed(start int, shareable bool) {
	w.segs = append(w.segs, seg{start: start, end: len(w.s.buf), ok: shareable})
}

// run visits every slot of p in the walk's mode.
func (w *podWalk) run(p *corev1.Pod) {
	w.slot = 0
	sp := &p.Spec
	for _, cs := range [][]corev1.Container{sp.InitContainers, sp.Containers} {
		for i := range cs {
			c := &cs[i]
			w.resources(&c.Resources.Limits)
			w.resources(&c.Resources.Requests)
			walkSlice(w, tagEnv, &c.Env)
			walkSlice(w, tagEnvFrom, &c.EnvFrom)
			walkSlice(w, tagPorts, &c.Ports)
			w.strings(tagArgs, &c.Args)
			w.strings(tagCommand, &c.Command)
			walkPtr(w, tagProbe, &c.LivenessProbe)
			walkPtr(w, tagProbe, &c.ReadinessProbe)
			walkPtr(w, tagProbe, &c.StartupProbe)
			walkPtr(w, tagSecurityContext, &c.SecurityContext)
			walkPtr(w, tagLifecycle, &c.Lifecycle)
		}
	}
	for i := range sp.Volumes {
		v := &sp.Volumes[i].VolumeSource
		walkPtr(w, tagProjected, &v.Projected)
		walkPtr(w, tagConfigMapVolume, &v.ConfigMap)
		walkPtr(w, tagSecretVolume, &v.Secret)
		walkPtr(w, tagDownwardAPIVolume, &v.DownwardAPI)
	}
	walkSlice(w, tagTolerations, &sp.Tolerations)
	walkPtr(w, tagAffinity, &sp.Affinity)
	walkPtr(w, tagPodSecurityContext, &sp.SecurityContext)
	walkPtr(w, tagDNSConfig, &sp.DNSConfig)
	walkSlice(w, tagTopologySpread, &sp.TopologySpreadConstraints)
	walkSlice(w, tagImagePullSecrets, &sp.ImagePullSecrets)
	walkSlice(w, tagReadinessGates, &sp.ReadinessGates)
	w.nodeSelector(&sp.NodeSelector)
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		w.resources(&cs.AllocatedResources)
		var limits, requests *corev1.ResourceList
		if r := cs.Resources; r != nil {
			limits, requests = &r.Limits, &r.Requests
		}
		w.resources(limits)
		w.resources(requests)
	}
}

// slotKey writes the key of one slot alone into s.buf, for match mode's
// slots that differ from the template's; false if it cannot be shared.
func (w *podWalk) slotKey(i int, key func()) (seg, bool) {
	mode := w.mode
	w.mode, w.slot, w.segs = keying, i, w.segs[:0]
	w.s.buf = w.s.buf[:0]
	key()
	w.mode, w.slot = mode, i+1
	return w.segs[0], w.segs[0].ok
}

// walkPtr is the slot of a pointer field, keyed by its encoding.
func walkPtr[T any, P interface {
	*T
	marshaler
}](w *podWalk, tag byte, f *P) {
	i := w.next()
	s := w.s
	switch w.mode {
	case keying:
		start := len(s.buf)
		if *f == nil {
			s.buf = append(s.buf, tag|absent)
			w.keyed(start, false)
			return
		}
		s.buf = append(s.buf, tag)
		w.keyed(start, s.appendEncoding(*f))
	case perSlot:
		if w.segs[i].ok {
			*f = shareSeg(s, w.segs[i], *f)
		}
		w.vals[i] = *f
		w.eqs[i] = s.eq.of(reflect.TypeFor[T]())
	case match:
		if *f == nil {
			return
		}
		if c, ok := w.vals[i].(P); ok && c != nil && (c == *f || w.eqs[i](unsafe.Pointer(c), unsafe.Pointer(*f))) {
			*f = c
			return
		}
		if sg, ok := w.slotKey(i, func() { walkPtr[T, P](w, tag, f) }); ok {
			*f = shareSeg(s, sg, *f)
		}
	}
}

// walkSlice is the slot of a list, keyed by its elements' encodings. A
// shared list's capacity is its length, so an append to it copies.
func walkSlice[T any, P interface {
	*T
	marshaler
}](w *podWalk, tag byte, f *[]T) {
	i := w.next()
	s := w.s
	switch w.mode {
	case keying:
		xs := *f
		start, ok := w.listHeader(tag, len(xs))
		if !ok {
			return
		}
		for j := range xs {
			if ok = s.appendEncoding(P(&xs[j])) && len(s.buf)-start <= maxShareBytes; !ok {
				break
			}
		}
		w.keyed(start, ok)
	case perSlot:
		if w.segs[i].ok {
			*f = shareSeg(s, w.segs[i], (*f)[:len(*f):len(*f)])
		}
		w.vals[i] = *f
		w.eqs[i] = s.eq.of(reflect.TypeFor[[]T]())
	case match:
		if len(*f) == 0 {
			return
		}
		if c, ok := w.vals[i].([]T); ok && len(c) > 0 && w.eqs[i](unsafe.Pointer(&c), unsafe.Pointer(f)) {
			*f = c
			return
		}
		if sg, ok := w.slotKey(i, func() { walkSlice[T, P](w, tag, f) }); ok {
			*f = shareSeg(s, sg, (*f)[:len(*f):len(*f)])
		}
	}
}

// listHeader starts the key of a list of n elements tagged tag and
// returns where it starts; an empty list is keyed as absent at once, and
// ok is false.
func (w *podWalk) listHeader(tag byte, n int) (start int, ok bool) {
	s := w.s
	start = len(s.buf)
	if n == 0 {
		s.buf = append(s.buf, tag|absent)
		w.keyed(start, false)
		return start, false
	}
	s.buf = append(s.buf, tag)
	s.buf = binary.AppendUvarint(s.buf, uint64(n))
	return start, true
}

// strings is the slot of a list of strings (args, command).
func (w *podWalk) strings(tag byte, f *[]string) {
	i := w.next()
	s := w.s
	switch w.mode {
	case keying:
		xs := *f
		start, ok := w.listHeader(tag, len(xs))
		if !ok {
			return
		}
		for _, x := range xs {
			s.buf = binary.AppendUvarint(s.buf, uint64(len(x)))
			s.buf = append(s.buf, x...)
		}
		w.keyed(start, len(s.buf)-start <= maxShareBytes)
	case perSlot:
		if w.segs[i].ok {
			*f = shareSeg(s, w.segs[i], (*f)[:len(*f):len(*f)])
		}
		w.vals[i] = *f
	case match:
		if len(*f) == 0 {
			return
		}
		if c, ok := w.vals[i].([]string); ok && len(c) > 0 && slices.Equal(c, *f) {
			*f = c
			return
		}
		if sg, ok := w.slotKey(i, func() { w.strings(tag, f) }); ok {
			*f = shareSeg(s, sg, (*f)[:len(*f):len(*f)])
		}
	}
}

// resources is the slot of a resource list (f nil: a status without
// resources), shared by its own table.
func (w *podWalk) resources(f *corev1.ResourceList) {
	i := w.next()
	if w.mode == keying {
		w.keyed(len(w.s.buf), false)
		return
	}
	if f == nil || len(*f) == 0 {
		return
	}
	switch w.mode {
	case perSlot:
		*f = w.s.resourceList(*f)
		w.vals[i] = newListTemplate(*f)
	case match:
		if c, ok := w.vals[i].(*listTemplate); ok && c.equal(*f) {
			*f = c.list
			return
		}
		*f = w.s.resourceList(*f)
	}
}

// listTemplate is a template's resource list, with its entries of known
// names at hand, so that comparing a list with it costs one lookup per
// entry.
type listTemplate struct {
	list  corev1.ResourceList
	known bool // every name is a known one: names and qs hold the entries
	n     int
	names [len(knownResources)]corev1.ResourceName
	qs    [len(knownResources)]resource.Quantity
}

func newListTemplate(l corev1.ResourceList) *listTemplate {
	t := &listTemplate{list: l}
	for _, name := range knownResources {
		if q, ok := l[name]; ok {
			t.names[t.n], t.qs[t.n] = name, q
			t.n++
		}
	}
	t.known = t.n == len(l)
	return t
}

// equal reports whether l equals the template's list (see resourceList).
func (t *listTemplate) equal(l corev1.ResourceList) bool {
	if len(l) != len(t.list) {
		return false
	}
	if !t.known {
		return equalResources(t.list, l)
	}
	for j := range t.n {
		q, ok := l[t.names[j]]
		if !ok || !equalQuantity(q, t.qs[j]) {
			return false
		}
	}
	return true
}

// nodeSelector is the slot of the node selector, shared with the equal
// label maps.
func (w *podWalk) nodeSelector(f *map[string]string) {
	i := w.next()
	s := w.s
	m := *f
	if w.mode == keying {
		w.keyed(len(s.buf), false)
		return
	}
	if len(m) == 0 {
		return
	}
	switch w.mode {
	case perSlot:
		*f = s.stringMap(m, func() map[string]string { return s.intern(m) })
		w.vals[i] = *f
	case match:
		if c, ok := w.vals[i].(map[string]string); ok && len(c) > 0 && maps.Equal(c, m) {
			*f = c
			return
		}
		*f = s.stringMap(m, func() map[string]string { return s.intern(m) })
	}
}

// appendEncoding appends m's encoding, preceded by its length, to s.buf;
// false when it is larger than maxShareBytes or does not encode. The
// caller holds s.podMu.
func (s *sharer) appendEncoding(m marshaler) bool {
	n := m.Size()
	if n > maxShareBytes {
		return false
	}
	s.buf = binary.AppendUvarint(s.buf, uint64(n))
	at := len(s.buf)
	s.buf = append(s.buf, make([]byte, n)...)
	w, err := m.MarshalToSizedBuffer(s.buf[at:])
	return err == nil && w == n
}

func hashBytes(s *sharer, b []byte) uint64 { return maphash.Bytes(s.seed, b) }

// shareSeg returns the shared value keyed by sg, or v, which becomes the
// shared value if there is none. The caller holds s.podMu.
func shareSeg[V any](s *sharer, sg seg, v V) V {
	key := s.buf[sg.start:sg.end]
	h := hashBytes(s, key)
	e, found := s.enc.get(h)
	if !found {
		s.enc.put(h, encoded{key: string(key), v: v})
		return v
	}
	if e.key == string(key) { // else a collision: share neither
		if c, ok := e.v.(V); ok {
			return c
		}
	}
	return v
}

// pod replaces the sub-structures of p that the replicas of a workload
// repeat by shared ones: per container its resources, environment, ports,
// arguments, probes, security context and lifecycle; the sources of its
// projected, ConfigMap, Secret and downward API volumes (not the volumes,
// whose names often differ per Pod: kube-api-access-<random>); its
// tolerations, affinity, security context, DNS config, spread
// constraints, pull secrets, readiness gates and node selector; and its
// containers' allocated and reported resources. It writes only to p's own
// fields, never into a shared value. Volume mounts and the rest of the
// status are left alone: they usually differ per Pod.
//
// Values are shared when equal (see equality), or, without a template,
// when their protobuf encodings are: the form the API server serves
// built-in kinds in, in which two values that encode the same are the same
// object to the API (an empty list decoded from JSON and an absent one are
// not told apart). Resource lists are equal with the same names and
// quantities of equal value and format, which serialize the same.
func (s *sharer) pod(p *corev1.Pod) {
	s.podMu.Lock()
	defer s.podMu.Unlock()
	w := &s.walk
	*w = podWalk{s: s, segs: w.segs[:0]}
	owner, hdr := controllerUID(p), header(p)
	var h uint64
	if owner != "" {
		h = maphash.String(s.seed, owner)
		if t, found := s.templates.get(h); found && t.owner == owner && t.header == hdr {
			w.vals, w.eqs = t.vals, t.eqs
			w.mode = match
			w.run(p)
			w.vals, w.eqs = nil, nil
			return
		}
	}
	s.buf = s.buf[:0]
	w.mode = keying
	w.run(p)
	w.vals, w.eqs = make([]any, w.slot), make([]eqFunc, w.slot)
	w.mode = perSlot
	w.run(p)
	if owner != "" {
		s.templates.put(h, &template{owner: owner, header: hdr, vals: w.vals, eqs: w.eqs})
	}
	w.vals, w.eqs = nil, nil
}
