package store

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
)

// byColor indexes ConfigMaps by their comma-separated "colors" label:
// none, one or several values.
func byColor(obj any) ([]string, error) {
	v := obj.(*corev1.ConfigMap).Labels["colors"]
	if v == "" {
		return nil, nil
	}
	return strings.Split(v, ","), nil
}

// byName indexes by name, to be added while objects are stored.
func byName(obj any) ([]string, error) { return []string{obj.(*corev1.ConfigMap).Name}, nil }

func put(s *Store, obj any) error {
	k, err := KeyOf(obj)
	if err != nil {
		return err
	}
	return s.Put(k, obj)
}

// TestStoreMatchesClientGo applies the same random changes to a Store and
// to client-go's Indexer and compares every read after each change: Get
// with GetByKey, Each of a namespace with the namespace index, Each of
// everything with List, and ByIndex with ByIndex.
func TestStoreMatchesClientGo(t *testing.T) {
	ours := New()
	require.NoError(t, ours.AddIndexes(map[string]IndexFunc{"color": byColor}))
	theirs := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc,
		toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc, "color": byColor})
	rng := rand.New(rand.NewPCG(1, 2))
	namespaces := []string{"", "a", "b", "c"} // "" stands for cluster-scoped objects
	colors := []string{"", "red", "green", "red,green", "blue,red", "green,green"}
	rv := 0
	random := func() *corev1.ConfigMap {
		rv++
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace:       namespaces[rng.IntN(len(namespaces))],
			Name:            fmt.Sprint("cm-", rng.IntN(12)),
			ResourceVersion: fmt.Sprint(rv),
		}}
		if c := colors[rng.IntN(len(colors))]; c != "" {
			cm.Labels = map[string]string{"colors": c}
		}
		return cm
	}
	indexes := []string{"color"}
	for step := range 2000 {
		cm := random()
		what := "put " + cm.Namespace + "/" + cm.Name
		if rng.IntN(10) < 3 {
			what = "delete " + cm.Namespace + "/" + cm.Name
			require.NoError(t, ours.Delete(Key{cm.Namespace, cm.Name}))
			require.NoError(t, theirs.Delete(cm))
		} else {
			require.NoError(t, put(ours, cm))
			require.NoError(t, theirs.Update(cm))
		}
		if step == 1000 {
			require.NoError(t, ours.AddIndexes(map[string]IndexFunc{"name": byName}))
			require.NoError(t, theirs.AddIndexers(toolscache.Indexers{"name": byName}))
			indexes = append(indexes, "name")
		}
		compareStores(t, fmt.Sprintf("step %d (%s)", step, what), ours, theirs, namespaces, indexes)
	}
	assert.Error(t, ours.AddIndexes(map[string]IndexFunc{"color": byColor}), "a name in use")
	assert.Error(t, ours.ByIndex("nope", "x", func(any) bool { return true }), "an unknown index")
	_, ok := ours.IndexFunc("nope")
	assert.False(t, ok)
	_, ok = ours.IndexFunc("color")
	assert.True(t, ok)
}

func compareStores(t *testing.T, at string, ours *Store, theirs toolscache.Indexer, namespaces, indexes []string) {
	t.Helper()
	view := func(objs []any) []string {
		out := make([]string, 0, len(objs))
		for _, o := range objs {
			cm := o.(*corev1.ConfigMap)
			out = append(out, cm.Namespace+"/"+cm.Name+"@"+cm.ResourceVersion)
		}
		sort.Strings(out)
		return out
	}
	each := func(ns string) []any {
		var out []any
		ours.Each(ns, func(k Key, obj any) bool {
			cm := obj.(*corev1.ConfigMap)
			require.Equal(t, Key{cm.Namespace, cm.Name}, k, "%s: Each's key", at)
			out = append(out, obj)
			return true
		})
		return out
	}
	require.Equal(t, view(theirs.List()), view(each("")), "%s: objects", at)
	require.Equal(t, len(theirs.List()), ours.Len(), "%s: Len", at)
	for _, ns := range namespaces[1:] {
		b, err := theirs.ByIndex(toolscache.NamespaceIndex, ns)
		require.NoError(t, err)
		require.Equal(t, view(b), view(each(ns)), "%s: Each %q", at, ns)
	}
	for _, key := range append(theirs.ListKeys(), "a/missing", "missing") {
		ns, name, err := toolscache.SplitMetaNamespaceKey(key)
		require.NoError(t, err)
		a, aok := ours.Get(ns, name)
		b, bok, err := theirs.GetByKey(key)
		require.NoError(t, err)
		require.Equal(t, bok, aok, "%s: Get %s", at, key)
		if bok {
			require.Same(t, b, a, "%s: Get %s", at, key)
		}
	}
	for _, name := range indexes {
		for _, v := range append(theirs.ListIndexFuncValues(name), "absent") {
			var a []any
			require.NoError(t, ours.ByIndex(name, v, func(obj any) bool { a = append(a, obj); return true }))
			b, err := theirs.ByIndex(name, v)
			require.NoError(t, err)
			require.Equal(t, view(b), view(a), "%s: ByIndex %s=%s", at, name, v)
		}
	}
}

// TestStoreIndexError stores an object whose index function fails, as
// client-go does, and reports the error.
func TestStoreIndexError(t *testing.T) {
	s := New()
	require.NoError(t, s.AddIndexes(map[string]IndexFunc{"bad": func(any) ([]string, error) { return nil, fmt.Errorf("boom") }}))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	assert.ErrorContains(t, put(s, cm), "boom")
	got, ok := s.Get("ns", "a")
	assert.True(t, ok)
	assert.Same(t, cm, got)
	assert.ErrorContains(t, s.Delete(Key{"ns", "a"}), "boom")
	_, ok = s.Get("ns", "a")
	assert.False(t, ok)
}

// TestStoreStopsWhenToldTo checks that Each and ByIndex stop at the first
// false.
func TestStoreStopsWhenToldTo(t *testing.T) {
	s := New()
	require.NoError(t, s.AddIndexes(map[string]IndexFunc{"all": func(any) ([]string, error) { return []string{"x"}, nil }}))
	for i := range 10 {
		require.NoError(t, put(s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprint("ns-", i%3), Name: fmt.Sprint("a-", i)}}))
	}
	n := 0
	s.Each("", func(Key, any) bool { n++; return n < 4 })
	assert.Equal(t, 4, n)
	n = 0
	require.NoError(t, s.ByIndex("all", "x", func(any) bool { n++; return n < 2 }))
	assert.Equal(t, 2, n)
}

// TestStoreHoldsOneType checks that a store refuses, by name, objects of
// a Go type other than the first it stored, and non-pointers.
func TestStoreHoldsOneType(t *testing.T) {
	s := New()
	require.NoError(t, put(s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}))
	err := put(s, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}})
	assert.ErrorContains(t, err, "the store holds *v1.ConfigMap, not *v1.Secret")
	assert.Error(t, s.Put(Key{"ns", "c"}, corev1.ConfigMap{}), "not a pointer")
	assert.Equal(t, 1, s.Len())
	got, ok := s.Get("ns", "a")
	require.True(t, ok)
	assert.Equal(t, "a", got.(*corev1.ConfigMap).Name)
	_, err = KeyOf(42)
	assert.Error(t, err, "no metadata")
}

// TestSizes counts every namespace exactly and encodes within both
// budgets: the namespaces past the total budget get the mean of the
// others.
func TestSizes(t *testing.T) {
	s := New()
	for i := range 50 {
		require.NoError(t, put(s, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprint("ns-", i%5), Name: fmt.Sprint("a-", i)}}))
	}
	samples := s.samples(4, 10)
	require.Len(t, samples, 5)
	total := 0
	for _, sm := range samples {
		assert.Equal(t, 10, sm.count, sm.namespace)
		assert.LessOrEqual(t, len(sm.objects), 4)
		for _, obj := range sm.objects {
			assert.Equal(t, sm.namespace, obj.(*corev1.ConfigMap).Namespace)
		}
		total += len(sm.objects)
	}
	assert.Equal(t, 10, total)
	one := jsonSize(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-0", Name: "a-0"}})
	require.Positive(t, one)
	sizes := s.Sizes(4, 10)
	require.Len(t, sizes, 5)
	for _, sz := range sizes {
		assert.Equal(t, 10, sz.Objects)
		assert.InDelta(t, 10*one, sz.Bytes, float64(10*one)/5, sz.Namespace) // names differ by a digit or two
	}
	assert.Zero(t, jsonSize(func() {}), "not encodable")
}

// TestObjectsInMemoryOrder checks that Objects returns every stored
// object once, of the stored type, ordered by address.
func TestObjectsInMemoryOrder(t *testing.T) {
	s := New()
	assert.Empty(t, s.Objects(), "an empty store")
	want := map[*corev1.ConfigMap]bool{}
	for i := range 500 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprint("ns-", i%7), Name: fmt.Sprint("a-", i)}}
		require.NoError(t, put(s, cm))
		want[cm] = true
	}
	for i := range 100 { // deleted ones are not returned
		k := Key{fmt.Sprint("ns-", i%7), fmt.Sprint("a-", i)}
		obj, _ := s.Get(k.Namespace, k.Name)
		delete(want, obj.(*corev1.ConfigMap))
		require.NoError(t, s.Delete(k))
	}
	got := s.Objects()
	require.Len(t, got, len(want))
	var last uintptr
	for _, obj := range got {
		cm := obj.(*corev1.ConfigMap)
		assert.True(t, want[cm], "%s/%s is stored", cm.Namespace, cm.Name)
		delete(want, cm)
		addr := uintptr(unsafe.Pointer(cm))
		assert.Greater(t, addr, last, "in address order")
		last = addr
	}
	assert.Empty(t, want, "every stored object is returned")
}

// TestGetSeesTheLatestPutAndDelete checks Gets of objects among the last
// ones Put (the recent entries) and beyond them: the newest version is
// found, a deleted object is not, and one deleted and stored again is.
func TestGetSeesTheLatestPutAndDelete(t *testing.T) {
	s := New()
	cm := func(name, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	}
	get := func(name string) string {
		obj, ok := s.Get("ns", name)
		if !ok {
			return "none"
		}
		return obj.(*corev1.ConfigMap).ResourceVersion
	}
	require.NoError(t, put(s, cm("a", "1")))
	require.NoError(t, put(s, cm("a", "2")))
	assert.Equal(t, "2", get("a"), "the newer of two recent versions")
	require.NoError(t, s.Delete(Key{"ns", "a"}))
	assert.Equal(t, "none", get("a"), "deleted while recent")
	require.NoError(t, put(s, cm("a", "3")))
	assert.Equal(t, "3", get("a"))
	for i := range 3 * recentSize {
		require.NoError(t, put(s, cm(fmt.Sprint("b-", i), "1")))
	}
	assert.Equal(t, "3", get("a"), "found in the table once no longer recent")
	require.NoError(t, put(s, cm("a", "4")))
	assert.Equal(t, "4", get("a"))
	_, ok := s.Get("other", "a")
	assert.False(t, ok, "another namespace")
	require.NoError(t, s.Delete(Key{"ns", "b-0"}))
	assert.Equal(t, "none", get("b-0"), "deleted after it left the recent entries")
}
