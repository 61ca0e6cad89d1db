package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeloop/kubeloop/cache/internal/store"
)

// sameMap reports whether a and b are one map.
func sameMap(a, b map[string]string) bool {
	return a != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestStoredSharesEqualMaps decodes updates of a stored object whose
// labels and annotations are, or are not, those stored, and expects the
// stock decoder's object in every case, with the stored maps where equal.
func TestStoredSharesEqualMaps(t *testing.T) {
	cmGVK := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	stock := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
	storedCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns",
		Labels: map[string]string{"app": "web", "tier": "front"}, Annotations: map[string]string{"a": "b"}}}
	lookups := 0
	var st Stored
	unregister := st.Register(cmGVK, "", func(ns, name string) (any, bool) {
		lookups++
		if ns == "ns" && name == "cm" {
			return storedCM, true
		}
		return nil, false
	})

	update := func(mut func(cm *corev1.ConfigMap)) *corev1.ConfigMap {
		cm := testObjects()[0].(*corev1.ConfigMap).DeepCopy()
		cm.Name, cm.Namespace = "cm", "ns"
		cm.Labels = map[string]string{"app": "web", "tier": "front"}
		cm.Annotations = map[string]string{"a": "b"}
		mut(cm)
		return cm
	}
	cases := []struct {
		name                    string
		obj                     *corev1.ConfigMap
		shareLabels, shareAnnos bool
	}{
		{"both equal", update(func(*corev1.ConfigMap) {}), true, true},
		{"a label value differs", update(func(cm *corev1.ConfigMap) { cm.Labels["tier"] = "back" }), false, true},
		{"a label more", update(func(cm *corev1.ConfigMap) { cm.Labels["x"] = "y" }), false, true},
		{"a label fewer", update(func(cm *corev1.ConfigMap) { delete(cm.Labels, "tier") }), false, true},
		{"no annotations", update(func(cm *corev1.ConfigMap) { cm.Annotations = nil }), true, false},
		// Runs seen equal to stored maps before: shared without a lookup.
		{"another object", update(func(cm *corev1.ConfigMap) { cm.Name = "other" }), true, true},
		{"another namespace", update(func(cm *corev1.ConfigMap) { cm.Namespace = "ns2" }), true, true},
	}
	for _, strip := range []bool{false, true} {
		fast := &objectSerializer{Serializer: stock, creater: clientgoscheme.Scheme, strip: strip, stored: &st}
		for _, c := range cases {
			data := encodeProto(t, c.obj)
			want, _, err := stock.Decode(data, nil, nil)
			require.NoError(t, err)
			if strip {
				want.(*corev1.ConfigMap).ManagedFields = nil
			}
			got, _, err := fast.Decode(data, nil, nil)
			require.NoError(t, err, c.name)
			assert.Equal(t, want, got, "strip=%v %s", strip, c.name)
			cm := got.(*corev1.ConfigMap)
			assert.Equal(t, c.shareLabels, sameMap(cm.Labels, storedCM.Labels), "labels shared: strip=%v %s", strip, c.name)
			assert.Equal(t, c.shareAnnos, sameMap(cm.Annotations, storedCM.Annotations), "annotations shared: strip=%v %s", strip, c.name)
			assert.Equal(t, !strip, len(cm.ManagedFields) == 1, "managedFields kept unless stripped: %s", c.name)
		}
	}
	require.Positive(t, lookups)

	// Runs seen before need no lookup.
	before := lookups
	fast := &objectSerializer{Serializer: stock, creater: clientgoscheme.Scheme, stored: &st}
	got, _, err := fast.Decode(encodeProto(t, cases[0].obj), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, before, lookups, "no lookup")
	assert.True(t, sameMap(got.(*corev1.ConfigMap).Labels, storedCM.Labels))

	// A fresh Stored shares nothing with an object it does not store.
	var fresh Stored
	fresh.Register(cmGVK, "", func(string, string) (any, bool) { return nil, false })
	got, _, err = (&objectSerializer{Serializer: stock, creater: clientgoscheme.Scheme, stored: &fresh}).Decode(encodeProto(t, cases[5].obj), nil, nil)
	require.NoError(t, err)
	assert.False(t, sameMap(got.(*corev1.ConfigMap).Labels, storedCM.Labels))
	assert.Equal(t, storedCM.Labels, got.(*corev1.ConfigMap).Labels)

	// Another kind is not looked up in the ConfigMaps' store; after
	// unregister nothing is, and nothing is shared.
	secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns", Labels: map[string]string{"app": "web", "tier": "front"}}}
	got, _, err = fast.Decode(encodeProto(t, secret), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, before, lookups)
	assert.Equal(t, secret.Labels, got.(*corev1.Secret).Labels)
	unregister()
	got, _, err = fast.Decode(encodeProto(t, cases[0].obj), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, before, lookups)
	assert.False(t, sameMap(got.(*corev1.ConfigMap).Labels, storedCM.Labels))
	assert.Equal(t, storedCM.Labels, got.(*corev1.ConfigMap).Labels)
}

// TestStoredRegistrationsByNamespace looks objects up in the store of
// their namespace's informer, else in the cluster-wide one, and keeps a
// later registration when an earlier one is undone.
func TestStoredRegistrationsByNamespace(t *testing.T) {
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	obj := func(l string) runtime.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"l": l}}}
	}
	in := func(l string) Lookup { return func(string, string) (any, bool) { return obj(l), true } }
	var st Stored
	metaIn := func(ns string) *metav1.ObjectMeta {
		l := st.lookup(gvk, []byte(ns))
		if l == nil {
			return nil
		}
		return storedMeta(l, []byte(ns), []byte("x"))
	}
	assert.Nil(t, metaIn("a"))
	st.Register(gvk, "a", in("a"))
	undoAll := st.Register(gvk, "", in("all"))
	assert.Equal(t, "a", metaIn("a").Labels["l"])
	assert.Equal(t, "all", metaIn("b").Labels["l"])
	st.Register(gvk, "", in("all2"))
	undoAll() // replaced meanwhile: the later one stays
	assert.Equal(t, "all2", metaIn("b").Labels["l"])
}

// TestEqualEntriesNeedsIncreasingKeys refuses entries out of order or
// repeated, which a map built from them might not equal.
func TestEqualEntriesNeedsIncreasingKeys(t *testing.T) {
	entry := func(k, v string) []byte { return msg(metaLabels, cat(msg(1, []byte(k)), msg(2, []byte(v)))) }
	m := map[string]string{"a": "1", "b": "2"}
	assert.True(t, equalEntries(cat(entry("a", "1"), entry("b", "2")), m))
	assert.False(t, equalEntries(cat(entry("b", "2"), entry("a", "1")), m), "out of order")
	assert.False(t, equalEntries(cat(entry("a", "1"), entry("a", "1")), map[string]string{"a": "1", "x": "1"}), "repeated")
	assert.False(t, equalEntries(entry("a", "1"), m), "fewer")
	assert.False(t, equalEntries(nil, map[string]string{}), "an empty map is not shared")
	assert.True(t, equalEntries(msg(metaLabels, msg(1, []byte("k"))), map[string]string{"k": ""}), "a missing value is empty")
}

// TestLayoutDropsRunsAndKeepsTheRest finds the runs of labels,
// annotations and managedFields, drops the ones asked for and keeps every
// other byte in order; metadata whose runs are split is refused.
func TestLayoutDropsRunsAndKeepsTheRest(t *testing.T) {
	meta := cat(msg(1, []byte("n")), msg(3, []byte("ns")), msg(metaLabels, []byte("l1")), msg(metaLabels, []byte("l2")),
		msg(metaAnnotations, []byte("a")), msg(13, []byte("o")), msg(metaManaged, []byte("m")))
	obj := cat(msg(1, meta), msg(2, []byte("data")))
	l, ok := layoutOf(obj)
	require.True(t, ok)
	assert.Equal(t, "n", string(l.name))
	assert.Equal(t, "ns", string(l.namespace))
	got := l.without(obj, nil, l.labels, span{-1, -1}, l.managed)
	assert.Equal(t, cat(msg(1, cat(msg(1, []byte("n")), msg(3, []byte("ns")), msg(metaAnnotations, []byte("a")), msg(13, []byte("o")))), msg(2, []byte("data"))), got)

	_, ok = layoutOf(cat(msg(1, cat(msg(metaLabels, []byte("l1")), msg(3, []byte("ns")), msg(metaLabels, []byte("l2"))))))
	assert.False(t, ok, "labels in two runs")
	_, ok = layoutOf(cat(msg(1, meta), msg(1, meta)))
	assert.False(t, ok, "metadata twice")
}

// msg encodes a length-delimited field.
func msg(num uint64, payload []byte) []byte {
	b := binary.AppendUvarint(nil, num<<3|2)
	b = binary.AppendUvarint(b, uint64(len(payload)))
	return append(b, payload...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestSeenMapsForgetsAfterTwoGenerations checks that a remembered map is
// returned only for its own run and field, and is forgotten once two
// generations of other runs have passed.
func TestSeenMapsForgetsAfterTwoGenerations(t *testing.T) {
	var s seenMaps
	labels := func(run string) map[string]string { m, _ := s.get([]byte(run), nil); return m }
	l, a := s.get([]byte("run"), []byte("run"))
	assert.Nil(t, l, "empty")
	assert.Nil(t, a, "empty")
	m := map[string]string{"a": "b"}
	s.put(metaLabels, []byte("run"), m)
	assert.True(t, sameMap(labels("run"), m))
	_, a = s.get(nil, []byte("run"))
	assert.Nil(t, a, "another field")
	assert.Nil(t, labels("run2"), "another run")
	for i := range maxSeen {
		s.put(metaLabels, []byte(fmt.Sprint("other-", i)), m)
	}
	assert.True(t, sameMap(labels("run"), m), "found in the old generation, and kept")
	for i := range 2 * maxSeen {
		s.put(metaLabels, []byte(fmt.Sprint("more-", i)), m)
	}
	assert.Nil(t, labels("run"), "forgotten")

	long := make([]byte, maxSeenRun+1)
	s.put(metaLabels, long, m)
	assert.Nil(t, labels(string(long)), "a run longer than maxSeenRun is not remembered")
	assert.LessOrEqual(t, len(s.cur[0])+len(s.old[0]), 2*maxSeen)
}

// TestSharedMapsEqualTheStockDecodeUnderChurn decodes a stream of random
// updates of a few objects whose labels and annotations come from a small
// alphabet (so that runs repeat across objects and over time, and the
// remembered runs are found, forgotten and found again), storing each
// decoded object as the cache would, and checks every decoded object
// against apimachinery's own decoder, and that no stored map ever changes.
func TestSharedMapsEqualTheStockDecodeUnderChurn(t *testing.T) {
	cmGVK := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	stock := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme)
	stored := map[string]*corev1.ConfigMap{}
	var st Stored
	st.Register(cmGVK, "", func(ns, name string) (any, bool) {
		cm, ok := stored[ns+"/"+name]
		return cm, ok
	})
	fast := &objectSerializer{Serializer: stock, creater: clientgoscheme.Scheme, strip: true, stored: &st}
	rnd := rand.New(rand.NewPCG(1, 2))
	randomMap := func() map[string]string {
		n := rnd.IntN(4) // empty maps too
		if n == 0 {
			return nil
		}
		m := map[string]string{}
		for range n {
			m[fmt.Sprint("k", rnd.IntN(4))] = fmt.Sprint("v", rnd.IntN(3))
		}
		return m
	}
	type snapshot struct {
		m    map[string]string
		copy map[string]string
	}
	var seen []snapshot // every map the decoder handed out, and its contents then
	for i := range 20_000 {
		cm := testObjects()[0].(*corev1.ConfigMap).DeepCopy()
		cm.Namespace, cm.Name = fmt.Sprint("ns-", rnd.IntN(2)), fmt.Sprint("cm-", rnd.IntN(20))
		cm.ResourceVersion = fmt.Sprint(i + 1)
		cm.Labels, cm.Annotations = randomMap(), randomMap()
		data := encodeProto(t, cm)
		want, _, err := stock.Decode(data, nil, nil)
		require.NoError(t, err)
		want.(*corev1.ConfigMap).ManagedFields = nil
		got, _, err := fast.Decode(data, nil, nil)
		require.NoError(t, err)
		require.Equal(t, want, got, "update %d", i)
		g := got.(*corev1.ConfigMap)
		stored[g.Namespace+"/"+g.Name] = g // as the cache stores it
		for _, m := range []map[string]string{g.Labels, g.Annotations} {
			if m != nil && len(seen) < 2000 {
				seen = append(seen, snapshot{m, maps.Clone(m)})
			}
		}
		if i == 4*maxSeen { // let the remembered runs age out and come back
			for range 2 * maxSeen {
				st.seen.put(metaLabels, []byte(fmt.Sprint("filler-", rnd.Uint64())), map[string]string{})
			}
		}
	}
	for _, s := range seen {
		require.Equal(t, s.copy, s.m, "a map handed out never changes")
	}
	st.seen.mu.Lock()
	defer st.seen.mu.Unlock()
	assert.NotEmpty(t, st.seen.cur[0], "label runs were remembered")
	assert.NotEmpty(t, st.seen.cur[1], "annotation runs were remembered")
}

// TestFrameStringsAreNotKept is the proof that the strings lookup and
// storedMeta make over a frame's bytes (unsafe.String, no copy) are safe:
// neither the registrations' map nor the cache's store (store.Store.Get,
// the Lookup informers register) keeps them. After many lookups through
// byte slices that are then overwritten, every key the map and the store
// hold is still what was registered and put, and the lookups by fresh
// strings still find their objects.
func TestFrameStringsAreNotKept(t *testing.T) {
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	st := store.New()
	var names []store.Key
	for i := range 64 {
		k := store.Key{Namespace: fmt.Sprintf("ns-%d", i%4), Name: fmt.Sprintf("cm-%d", i)}
		require.NoError(t, st.Put(k, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name, Labels: map[string]string{"i": fmt.Sprint(i)}}}))
		names = append(names, k)
	}
	var reg Stored
	for ns := range 4 {
		reg.Register(gvk, fmt.Sprintf("ns-%d", ns), st.Get)
	}
	frame := make([]byte, 64)
	for round := range 3 {
		for _, k := range names {
			ns := append(frame[:0], k.Namespace...)
			name := append(frame[len(ns):len(ns)], k.Name...)
			l := reg.lookup(gvk, ns)
			require.NotNil(t, l, "registration of %s", k.Namespace)
			meta := storedMeta(l, ns, name)
			require.NotNil(t, meta, "%s found through the frame's bytes", k)
			assert.Equal(t, k.Name, meta.Name)
			for i := range frame { // the next frame overwrites the bytes
				frame[i] = byte('a' + (i+round)%26)
			}
			// Had the store kept a string over the frame (in its recent
			// entries, say), it would now read the new bytes and find an
			// object under a name that was never put.
			_, ok := st.Get(string(frame[:len(ns)]), string(frame[len(ns):len(ns)+len(name)]))
			assert.False(t, ok, "nothing is found under the overwritten bytes")
		}
	}
	for key := range *reg.m.Load() {
		assert.Regexp(t, `^ns-[0-3]$`, key.namespace, "a registration's key is its own string")
	}
	var seen []store.Key
	st.Each("", func(k store.Key, obj any) bool {
		seen = append(seen, store.Key{Namespace: k.Namespace, Name: k.Name})
		cm := obj.(*corev1.ConfigMap)
		assert.Equal(t, k, store.Key{Namespace: cm.Namespace, Name: cm.Name}, "the store's keys are unchanged")
		return true
	})
	assert.ElementsMatch(t, names, seen)
	for _, k := range names {
		_, ok := st.Get(k.Namespace, k.Name)
		assert.True(t, ok, "%s", k)
	}
}
