package cache_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
)

// TestPerNamespaceConfig: each namespace's Config selects and transforms
// its own objects; AllNamespaces beside listed namespaces holds every
// other namespace, without holding the listed ones twice.
func TestPerNamespaceConfig(t *testing.T) {
	nsA, nsB, nsC := newNamespace(t), newNamespace(t), newNamespace(t)
	blueHalf := func(i int, cm *corev1.ConfigMap) {
		if i%2 == 0 {
			cm.Labels = map[string]string{"team": "blue"}
		}
	}
	for _, ns := range []string{nsA, nsB, nsC} {
		createConfigMaps(t, ns, "cm", 4, blueHalf)
	}
	mark := func(obj any) (any, error) {
		cm := obj.(*corev1.ConfigMap)
		cm.Annotations = map[string]string{"transformed": "yes"}
		return cm, nil
	}
	c := startCache(t, cfg, cache.Options{
		DefaultNamespaces: map[string]cache.Config{
			nsA:                 {LabelSelector: labels.SelectorFromSet(labels.Set{"team": "blue"})},
			nsB:                 {Transform: mark},
			cache.AllNamespaces: {},
		},
	})
	ctx := ctxTimeout(t, time.Minute)

	var cms corev1.ConfigMapList
	require.NoError(t, c.List(ctx, &cms, client.InNamespace(nsA)))
	assert.Len(t, cms.Items, 2, "nsA's own label selector")
	require.NoError(t, c.List(ctx, &cms, client.InNamespace(nsB)))
	require.Len(t, cms.Items, 4)
	assert.Equal(t, "yes", cms.Items[0].Annotations["transformed"], "nsB's own transform")
	require.NoError(t, c.List(ctx, &cms, client.InNamespace(nsC)))
	assert.Len(t, cms.Items, 4, "nsC is not listed: AllNamespaces holds it")
	var got corev1.ConfigMap
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: nsC, Name: "cm-1"}, &got))
	assert.Empty(t, got.Annotations["transformed"])
	assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: nsA, Name: "cm-1"}, &got)))

	require.NoError(t, c.List(ctx, &cms))
	seen := map[string]int{}
	for _, cm := range cms.Items {
		seen[cm.Namespace+"/"+cm.Name]++
	}
	for key, n := range seen {
		assert.Equal(t, 1, n, "%s listed once", key)
	}
	assert.Equal(t, 2, countIn(cms.Items, nsA))
	assert.Equal(t, 4, countIn(cms.Items, nsB))
	assert.Equal(t, 4, countIn(cms.Items, nsC))
}

func countIn(items []corev1.ConfigMap, ns string) int {
	n := 0
	for _, cm := range items {
		if cm.Namespace == ns {
			n++
		}
	}
	return n
}

// TestAllNamespacesAlone: AllNamespaces alone is the whole cluster, with
// its Config.
func TestAllNamespacesAlone(t *testing.T) {
	nsA, nsB := newNamespace(t), newNamespace(t)
	for _, ns := range []string{nsA, nsB} {
		createConfigMaps(t, ns, "cm", 2, func(i int, cm *corev1.ConfigMap) {
			cm.Labels = map[string]string{"i": fmt.Sprint(i)}
		})
	}
	c := startCache(t, cfg, cache.Options{DefaultNamespaces: map[string]cache.Config{
		cache.AllNamespaces: {LabelSelector: labels.SelectorFromSet(labels.Set{"i": "1"})},
	}})
	ctx := ctxTimeout(t, time.Minute)
	var cms corev1.ConfigMapList
	require.NoError(t, c.List(ctx, &cms, client.InNamespace(nsA)))
	assert.Len(t, cms.Items, 1)
	require.NoError(t, c.List(ctx, &cms, client.InNamespace(nsB)))
	assert.Len(t, cms.Items, 1)
}

func TestNamespaceConfigValidation(t *testing.T) {
	_, err := cache.New(&rest.Config{Host: "https://127.0.0.1:1"}, cache.Options{
		DefaultNamespaces: map[string]cache.Config{"Bad_NS": {}, "ok": {SyncPeriod: ptr.To(-time.Second)}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {SyncPeriod: ptr.To(-time.Minute), Namespaces: map[string]cache.Config{"ok": {UnsafeDisableDeepCopy: ptr.To(false)}}},
		},
	})
	require.Error(t, err)
	assert.ErrorContains(t, err, `DefaultNamespaces["Bad_NS"]: not a namespace name`)
	assert.ErrorContains(t, err, `DefaultNamespaces["ok"].SyncPeriod -1s is negative`)
	assert.ErrorContains(t, err, `ByObject[v1, Kind=Secret].SyncPeriod -1m0s is negative`)
	assert.NotContains(t, err.Error(), "UnsafeDisableDeepCopy", "accepted per namespace, as controller-runtime does")

	_, err = cache.New(&rest.Config{Host: "https://127.0.0.1:1"}, cache.Options{
		DefaultNamespaces: map[string]cache.Config{cache.AllNamespaces: {}, "team-a": {}},
	})
	assert.NoError(t, err)
}

// Per-namespace configuration in controller-runtime's shape: a label
// selector for one namespace, every other namespace as it is.
func ExampleConfig() {
	opts := cache.Options{DefaultNamespaces: map[string]cache.Config{
		"team-a":            {LabelSelector: labels.SelectorFromSet(labels.Set{"app": "web"})},
		cache.AllNamespaces: {},
	}}
	_, err := cache.New(&rest.Config{Host: "https://127.0.0.1:1"}, opts)
	fmt.Println(err)

	opts.DefaultNamespaces["team-b"] = cache.Config{SyncPeriod: ptr.To(-time.Hour)}
	_, err = cache.New(&rest.Config{Host: "https://127.0.0.1:1"}, opts)
	fmt.Println(err)
	// Output:
	// <nil>
	// cache: DefaultNamespaces["team-b"].SyncPeriod -1h0m0s is negative
}

// TestPerNamespaceUnsafeDisableDeepCopy: a namespace's
// UnsafeDisableDeepCopy decides whether reads of its objects share the
// cache's memory, in Get, in a List of the namespace and object by object
// in a List across namespaces; a read's own option still wins.
func TestPerNamespaceUnsafeDisableDeepCopy(t *testing.T) {
	shared, copied := newNamespace(t), newNamespace(t)
	labelAll := func(i int, cm *corev1.ConfigMap) { cm.Labels = map[string]string{"i": fmt.Sprint(i)} }
	createConfigMaps(t, shared, "cm", 2, labelAll)
	createConfigMaps(t, copied, "cm", 2, labelAll)
	c := startCache(t, cfg, cache.Options{
		DefaultNamespaces: map[string]cache.Config{
			shared:              {UnsafeDisableDeepCopy: ptr.To(true)},
			cache.AllNamespaces: {},
		},
		ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {EnableWatchBookmarks: ptr.To(false)}},
	})
	ctx := ctxTimeout(t, time.Minute)
	labelsOf := func(cm corev1.ConfigMap) uintptr { return reflect.ValueOf(cm.Labels).Pointer() }
	get := func(ns string, opts ...client.GetOption) uintptr {
		var cm corev1.ConfigMap
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm-0"}, &cm, opts...))
		return labelsOf(cm)
	}
	assert.Equal(t, get(shared), get(shared), "Get in the namespace that shares")
	assert.NotEqual(t, get(copied), get(copied), "Get in the namespace that copies")
	assert.NotEqual(t, get(shared, &client.GetOptions{UnsafeDisableDeepCopy: ptr.To(false)}), get(shared), "the read's option wins")

	byKey := func(opts ...client.ListOption) map[string]uintptr {
		var cms corev1.ConfigMapList
		require.NoError(t, c.List(ctx, &cms, opts...))
		m := map[string]uintptr{}
		for _, cm := range cms.Items {
			m[cm.Namespace+"/"+cm.Name] = labelsOf(cm)
		}
		return m
	}
	first, second := byKey(), byKey()
	for _, name := range []string{"cm-0", "cm-1"} {
		assert.Equal(t, first[shared+"/"+name], second[shared+"/"+name], "a List across namespaces shares %s/%s", shared, name)
		assert.NotEqual(t, first[copied+"/"+name], second[copied+"/"+name], "a List across namespaces copies %s/%s", copied, name)
	}
	a, b := byKey(client.InNamespace(shared)), byKey(client.InNamespace(shared))
	assert.Equal(t, a, b, "a List of the namespace that shares")
}
