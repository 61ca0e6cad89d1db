package cache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

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

// TestObjectStoreMatchesClientGo applies the same random changes to an
// objectStore and to client-go's Indexer and compares every read after
// each change: the store must be a drop-in Indexer.
func TestObjectStoreMatchesClientGo(t *testing.T) {
	indexers := toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc, "color": byColor}
	ours := newObjectStore(indexers)
	theirs := toolscache.NewIndexer(toolscache.DeletionHandlingMetaNamespaceKeyFunc, indexers)
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
	for step := range 2000 {
		var what string
		switch op := rng.IntN(10); {
		case op < 5:
			cm := random()
			what = "update " + cm.Namespace + "/" + cm.Name
			require.NoError(t, ours.Update(cm))
			require.NoError(t, theirs.Update(cm))
		case op < 7:
			cm := random()
			what = "delete " + cm.Namespace + "/" + cm.Name
			require.NoError(t, ours.Delete(cm))
			require.NoError(t, theirs.Delete(cm))
		case op < 8:
			keys := theirs.ListKeys()
			if len(keys) == 0 {
				continue
			}
			key := keys[rng.IntN(len(keys))]
			what = "delete tombstone " + key
			d := toolscache.DeletedFinalStateUnknown{Key: key}
			require.NoError(t, ours.Delete(d))
			require.NoError(t, theirs.Delete(d))
		case op < 9 && step%50 == 0:
			list := make([]any, rng.IntN(20))
			for i := range list {
				list[i] = random()
			}
			what = fmt.Sprint("replace with ", len(list))
			require.NoError(t, ours.Replace(slices.Clone(list), "r"))
			require.NoError(t, theirs.Replace(slices.Clone(list), "r"))
		default:
			cm := random()
			what = "add " + cm.Namespace + "/" + cm.Name
			require.NoError(t, ours.Add(cm))
			require.NoError(t, theirs.Add(cm))
		}
		if step == 1000 {
			require.NoError(t, ours.AddIndexers(toolscache.Indexers{"name": byName}))
			require.NoError(t, theirs.AddIndexers(toolscache.Indexers{"name": byName}))
		}
		compareStores(t, fmt.Sprintf("step %d (%s)", step, what), ours, theirs, rng)
	}
	assert.Error(t, ours.AddIndexers(toolscache.Indexers{"color": byColor}), "a name in use")
	assert.Error(t, ours.AddIndexers(toolscache.Indexers{toolscache.NamespaceIndex: byColor}), "the namespace index is built in")
	_, err := ours.ByIndex("nope", "x")
	assert.Error(t, err, "an unknown index")
	_, err = ours.IndexKeys("nope", "x")
	assert.Error(t, err)
	_, err = ours.Index("nope", &corev1.ConfigMap{})
	assert.Error(t, err)
}

func compareStores(t *testing.T, at string, ours *objectStore, theirs toolscache.Indexer, rng *rand.Rand) {
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
	sorted := func(s []string) []string { s = append([]string{}, s...); sort.Strings(s); return s }
	require.Equal(t, sorted(theirs.ListKeys()), sorted(ours.ListKeys()), "%s: keys", at)
	require.Equal(t, view(theirs.List()), view(ours.List()), "%s: objects", at)
	for _, key := range append(theirs.ListKeys(), "a/missing", "missing") {
		a, aok, aerr := ours.GetByKey(key)
		b, bok, berr := theirs.GetByKey(key)
		require.NoError(t, aerr)
		require.NoError(t, berr)
		require.Equal(t, bok, aok, "%s: GetByKey %s", at, key)
		if bok {
			require.Same(t, b, a, "%s: GetByKey %s", at, key)
			g, ok, err := ours.Get(b)
			require.NoError(t, err)
			require.True(t, ok)
			require.Same(t, b, g)
		}
	}
	require.Equal(t, len(theirs.GetIndexers()), len(ours.GetIndexers()), "%s: indexers", at)
	for name := range theirs.GetIndexers() {
		require.Equal(t, sorted(theirs.ListIndexFuncValues(name)), sorted(ours.ListIndexFuncValues(name)), "%s: values of %s", at, name)
		for _, v := range append(theirs.ListIndexFuncValues(name), "absent") {
			a, err := ours.ByIndex(name, v)
			require.NoError(t, err)
			b, err := theirs.ByIndex(name, v)
			require.NoError(t, err)
			require.Equal(t, view(b), view(a), "%s: ByIndex %s=%s", at, name, v)
			ak, err := ours.IndexKeys(name, v)
			require.NoError(t, err)
			bk, err := theirs.IndexKeys(name, v)
			require.NoError(t, err)
			require.Equal(t, sorted(bk), sorted(ak), "%s: IndexKeys %s=%s", at, name, v)
		}
		if objs := theirs.List(); len(objs) > 0 {
			probe := objs[rng.IntN(len(objs))]
			a, err := ours.Index(name, probe)
			require.NoError(t, err)
			b, err := theirs.Index(name, probe)
			require.NoError(t, err)
			require.Equal(t, view(b), view(a), "%s: Index %s", at, name)
		}
	}
}

// TestObjectStoreIndexError stores an object whose index function fails,
// as client-go does, and reports the error.
func TestObjectStoreIndexError(t *testing.T) {
	s := newObjectStore(toolscache.Indexers{"bad": func(any) ([]string, error) { return nil, fmt.Errorf("boom") }})
	cm := cmNamed("a")
	assert.ErrorContains(t, s.Add(cm), "boom")
	got, ok := s.get("ns", "a")
	assert.True(t, ok)
	assert.Same(t, cm, got)
	_, _, err := s.GetByKey("a/b/c")
	assert.Error(t, err, "a malformed key")
	s.Bookmark("42")
	assert.Equal(t, "42", s.LastStoreSyncResourceVersion())
}

// TestParseKey parses keys as client-go's SplitMetaNamespaceKey does.
func TestParseKey(t *testing.T) {
	for _, key := range []string{"", "a", "ns/a", "/a", "ns/", "a/b/c", "//"} {
		ns, name, err := toolscache.SplitMetaNamespaceKey(key)
		k, kerr := parseKey(key)
		if err != nil {
			assert.Error(t, kerr, key)
			continue
		}
		require.NoError(t, kerr, key)
		assert.Equal(t, objectKey{ns, name}, k, key)
		if key != "" && key[0] != '/' {
			assert.Equal(t, key, k.String(), "round trip")
		}
	}
}

// TestObjectStoreHoldsOneType checks that a store refuses, by name, objects
// of a Go type other than the first it stored, and non-pointers.
func TestObjectStoreHoldsOneType(t *testing.T) {
	s := newObjectStore(nil)
	require.NoError(t, s.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}))
	err := s.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}})
	assert.ErrorContains(t, err, "the store holds *v1.ConfigMap, not *v1.Secret")
	assert.Error(t, s.Add(corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}), "not a pointer")
	assert.Equal(t, []string{"ns/a"}, s.ListKeys())
	got, ok, err := s.GetByKey("ns/a")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "a", got.(*corev1.ConfigMap).Name)
}
