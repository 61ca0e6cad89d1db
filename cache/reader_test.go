package cache_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
)

func TestSyncThousandsAndInitialListEvents(t *testing.T) {
	ns := newNamespace(t)
	const n = 3000
	createConfigMaps(t, ns, "cm", n, func(i int, cm *corev1.ConfigMap) {
		cm.Data = map[string]string{"i": fmt.Sprint(i)}
	})
	c := startCache(t, cfg, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}})
	ctx := ctxTimeout(t, time.Minute)

	inf, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	initial := make(chan bool, n+10)
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, isInInitialList bool) { initial <- isInInitialList },
	})
	require.NoError(t, err)
	require.True(t, c.WaitForCacheSync(ctx))

	var list corev1.ConfigMapList
	require.NoError(t, c.List(ctx, &list, client.InNamespace(ns)))
	assert.Len(t, list.Items, n)
	for i := range n {
		assert.True(t, <-initial, "add %d not flagged as part of the initial list", i)
	}
	assert.Zero(t, c.LazyInformerStarts(), "GetInformer is not a lazy start")
	assert.NoError(t, c.Healthy())
}

func TestFieldIndex(t *testing.T) {
	ns1, ns2 := newNamespace(t), newNamespace(t)
	owner := func(i int, cm *corev1.ConfigMap) { cm.Data = map[string]string{"owner": fmt.Sprint("o", i%3)} }
	createConfigMaps(t, ns1, "a", 6, owner)
	createConfigMaps(t, ns2, "b", 6, owner)
	c := startCache(t, cfg, cache.Options{})
	ctx := ctxTimeout(t, time.Minute)
	require.NoError(t, c.IndexField(ctx, &corev1.ConfigMap{}, "data.owner", func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["owner"]}
	}))
	_, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	require.True(t, c.WaitForCacheSync(ctx))

	tests := []struct {
		name string
		give []client.ListOption
		want int
	}{
		{"cluster-wide", []client.ListOption{client.MatchingFields{"data.owner": "o1"}}, 4},
		{"in namespace", []client.ListOption{client.MatchingFields{"data.owner": "o1"}, client.InNamespace(ns2)}, 2},
		{"with name", []client.ListOption{client.MatchingFields{"data.owner": "o1", "metadata.name": "a-1"}}, 1},
		{"metadata.namespace", []client.ListOption{client.MatchingFields{"data.owner": "o2", "metadata.namespace": ns1}}, 2},
		{"no match", []client.ListOption{client.MatchingFields{"data.owner": "nobody"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var list corev1.ConfigMapList
			require.NoError(t, c.List(ctx, &list, tt.give...))
			assert.Len(t, list.Items, tt.want)
			for _, cm := range list.Items {
				assert.Contains(t, []string{ns1, ns2}, cm.Namespace)
			}
		})
	}

	var list corev1.ConfigMapList
	err = c.List(ctx, &list, client.MatchingFields{"data.other": "x"})
	assert.ErrorIs(t, err, cache.ErrUnsupportedSelector)
	assert.ErrorContains(t, err, "data.other")
	err = c.List(ctx, &list, client.MatchingFields{"data.owner": "o1", "data.other": "x"})
	assert.ErrorIs(t, err, cache.ErrUnsupportedSelector, "an unindexed field beside an indexed one")
	err = c.List(ctx, &list, client.MatchingFieldsSelector{Selector: fields.OneTermNotEqualSelector("data.owner", "o1")})
	assert.ErrorIs(t, err, cache.ErrUnsupportedSelector)
	assert.ErrorContains(t, c.IndexField(ctx, &corev1.ConfigMap{}, "data.owner", func(client.Object) []string { return nil }), "conflict")
}

func TestUpdatesAndDeletesVisible(t *testing.T) {
	ns := newNamespace(t)
	createConfigMaps(t, ns, "cm", 1, nil)
	c := startCache(t, cfg, cache.Options{})
	ctx := ctxTimeout(t, time.Minute)
	key := client.ObjectKey{Namespace: ns, Name: "cm-0"}

	var got corev1.ConfigMap
	require.NoError(t, c.Get(ctx, key, &got), "first read starts the informer lazily")
	assert.Equal(t, "ConfigMap", got.Kind)
	assert.Equal(t, "v1", got.APIVersion)
	assert.NotEmpty(t, got.ResourceVersion)
	assert.EqualValues(t, 1, c.LazyInformerStarts())

	got.Data = map[string]string{"k": "v"}
	updated, err := kube.CoreV1().ConfigMaps(ns).Update(ctx, &got, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		var cm corev1.ConfigMap
		return c.Get(ctx, key, &cm) == nil && cm.ResourceVersion == updated.ResourceVersion && cm.Data["k"] == "v"
	}, 30*time.Second, 10*time.Millisecond)

	require.NoError(t, kube.CoreV1().ConfigMaps(ns).Delete(ctx, "cm-0", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(c.Get(ctx, key, &corev1.ConfigMap{}))
	}, 30*time.Second, 10*time.Millisecond)
	assert.EqualValues(t, 1, c.LazyInformerStarts(), "only the first read starts an informer")
}

func TestNamespacesAndLabelSelectors(t *testing.T) {
	nsA, nsB, nsC := newNamespace(t), newNamespace(t), newNamespace(t)
	lbl := func(i int, cm *corev1.ConfigMap) {
		if i%2 == 0 {
			cm.Labels = map[string]string{"team": "blue"}
		}
	}
	for _, ns := range []string{nsA, nsB, nsC} {
		createConfigMaps(t, ns, "cm", 4, lbl)
		_, err := kube.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	c := startCache(t, cfg, cache.Options{
		DefaultNamespaces: map[string]cache.Config{nsA: {}, nsB: {}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Label: labels.SelectorFromSet(labels.Set{"team": "blue"})},
			&corev1.Secret{}:    {Namespaces: map[string]cache.Config{nsC: {}}},
		},
	})
	ctx := ctxTimeout(t, time.Minute)

	var cms corev1.ConfigMapList
	require.NoError(t, c.List(ctx, &cms))
	assert.Len(t, cms.Items, 4, "2 blue ConfigMaps in each of 2 namespaces")
	for _, cm := range cms.Items {
		assert.Contains(t, []string{nsA, nsB}, cm.Namespace)
		assert.Equal(t, "blue", cm.Labels["team"])
	}
	require.NoError(t, c.List(ctx, &cms, client.InNamespace(nsB)))
	assert.Len(t, cms.Items, 2)
	require.NoError(t, c.List(ctx, &cms, client.InNamespace(nsB), client.MatchingLabels{"team": "red"}))
	assert.Empty(t, cms.Items)

	err := c.Get(ctx, client.ObjectKey{Namespace: nsC, Name: "cm-0"}, &corev1.ConfigMap{})
	assert.ErrorIs(t, err, cache.ErrNamespaceNotCached)
	assert.ErrorContains(t, err, nsC)
	assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: nsA, Name: "cm-1"}, &corev1.ConfigMap{})),
		"unlabelled ConfigMap is filtered on the server")

	var secrets corev1.SecretList
	require.NoError(t, c.List(ctx, &secrets))
	require.Len(t, secrets.Items, 1, "ByObject namespaces replace the defaults")
	assert.Equal(t, nsC, secrets.Items[0].Namespace)

	// Cluster-scoped kinds ignore namespaces.
	var nsList corev1.NamespaceList
	require.NoError(t, c.List(ctx, &nsList))
	assert.GreaterOrEqual(t, len(nsList.Items), 3)
}

func TestManagedFields(t *testing.T) {
	ns := newNamespace(t)
	createConfigMaps(t, ns, "cm", 1, nil)
	_, err := kube.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	c := startCache(t, cfg, cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}: {KeepManagedFields: true},
	}})
	ctx := ctxTimeout(t, time.Minute)

	var cm corev1.ConfigMap
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm-0"}, &cm))
	assert.Empty(t, cm.ManagedFields, "stripped by default")
	var s corev1.Secret
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "s"}, &s))
	assert.NotEmpty(t, s.ManagedFields, "kept on opt-out")
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm-0"}, u))
	assert.Empty(t, u.GetManagedFields(), "stripped from unstructured objects too")
}

func TestDeepCopyAndNoCopy(t *testing.T) {
	ns := newNamespace(t)
	createConfigMaps(t, ns, "cm", 2, func(_ int, cm *corev1.ConfigMap) { cm.Data = map[string]string{"k": "v"} })
	c := startCache(t, cfg, cache.Options{})
	ctx := ctxTimeout(t, time.Minute)
	key := client.ObjectKey{Namespace: ns, Name: "cm-0"}

	var a corev1.ConfigMap
	require.NoError(t, c.Get(ctx, key, &a))
	a.Data["k"] = "mutated"
	a.Labels = map[string]string{"x": "y"}
	var b corev1.ConfigMap
	require.NoError(t, c.Get(ctx, key, &b))
	assert.Equal(t, "v", b.Data["k"], "mutating a copy leaves the cache alone")
	assert.Empty(t, b.Labels)

	var list corev1.ConfigMapList
	require.NoError(t, c.List(ctx, &list, client.InNamespace(ns)))
	for i := range list.Items {
		list.Items[i].Data["k"] = "mutated"
	}
	require.NoError(t, c.Get(ctx, key, &b))
	assert.Equal(t, "v", b.Data["k"])

	var s1, s2 corev1.ConfigMap
	require.NoError(t, c.Get(ctx, key, &s1, client.UnsafeDisableDeepCopy))
	require.NoError(t, c.Get(ctx, key, &s2, client.UnsafeDisableDeepCopy))
	assert.Equal(t, reflect.ValueOf(s1.Data).Pointer(), reflect.ValueOf(s2.Data).Pointer(), "no-copy reads share the cached map")
	require.NoError(t, c.Get(ctx, key, &b))
	assert.NotEqual(t, reflect.ValueOf(s1.Data).Pointer(), reflect.ValueOf(b.Data).Pointer(), "default reads do not")
	var l1, l2 corev1.ConfigMapList
	require.NoError(t, c.List(ctx, &l1, client.InNamespace(ns), client.UnsafeDisableDeepCopy))
	require.NoError(t, c.List(ctx, &l2, client.InNamespace(ns), client.UnsafeDisableDeepCopy))
	require.Len(t, l1.Items, 2)
	require.Len(t, l2.Items, 2)
	// List order is the indexer's (unordered); pair the items by name.
	dataByName := map[string]uintptr{}
	for _, it := range l1.Items {
		dataByName[it.Name] = reflect.ValueOf(it.Data).Pointer()
	}
	for _, it := range l2.Items {
		assert.Equal(t, dataByName[it.Name], reflect.ValueOf(it.Data).Pointer(), "no-copy lists share %s's cached map", it.Name)
	}

	// A per-kind default, overridable per read.
	c2 := startCache(t, cfg, cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.ConfigMap{}: {UnsafeDisableDeepCopy: ptr.To(true)},
	}})
	require.NoError(t, c2.Get(ctx, key, &s1))
	require.NoError(t, c2.Get(ctx, key, &s2))
	assert.Equal(t, reflect.ValueOf(s1.Data).Pointer(), reflect.ValueOf(s2.Data).Pointer())
	require.NoError(t, c2.Get(ctx, key, &s2, deepCopy{}))
	assert.NotEqual(t, reflect.ValueOf(s1.Data).Pointer(), reflect.ValueOf(s2.Data).Pointer())
}

// TestGetShared reads objects without any copy from a cache of a real API
// server: the very object the cache holds, read-only, replaced (not
// changed) when the object is updated.
func TestGetShared(t *testing.T) {
	ns := newNamespace(t)
	createConfigMaps(t, ns, "cm", 2, func(_ int, cm *corev1.ConfigMap) { cm.Data = map[string]string{"k": "v"} })
	c := startCache(t, cfg, cache.Options{})
	ctx := ctxTimeout(t, time.Minute)
	key := client.ObjectKey{Namespace: ns, Name: "cm-0"}

	first, err := client.GetShared[*corev1.ConfigMap](ctx, c, key)
	require.NoError(t, err)
	assert.Equal(t, "v", first.Data["k"])
	assert.Equal(t, metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, first.TypeMeta)
	assert.NotEmpty(t, first.ResourceVersion)
	again, err := client.GetShared[*corev1.ConfigMap](ctx, c, key)
	require.NoError(t, err)
	assert.Same(t, first, again, "both reads return the cached object itself")
	var viaGet corev1.ConfigMap
	require.NoError(t, c.Get(ctx, key, &viaGet, client.UnsafeDisableDeepCopy))
	assert.Equal(t, reflect.ValueOf(first.Data).Pointer(), reflect.ValueOf(viaGet.Data).Pointer(), "the no-copy Get's fields are the shared object's")

	_, err = client.GetShared[*corev1.ConfigMap](ctx, c, client.ObjectKey{Namespace: ns, Name: "absent"})
	assert.True(t, apierrors.IsNotFound(err), "missing object: %v", err)
	_, err = c.GetShared(ctx, key, nil)
	assert.ErrorIs(t, err, client.ErrNilObject)

	// An update replaces the cached object; the one handed out keeps the
	// old contents.
	live, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	updated := first.DeepCopy()
	updated.Data = map[string]string{"k": "w"}
	require.NoError(t, live.Update(ctx, updated))
	require.Eventually(t, func() bool {
		cm, err := client.GetShared[*corev1.ConfigMap](ctx, c, key)
		return err == nil && cm.ResourceVersion == updated.ResourceVersion
	}, time.Minute, 10*time.Millisecond)
	now, err := client.GetShared[*corev1.ConfigMap](ctx, c, key)
	require.NoError(t, err)
	assert.NotSame(t, first, now)
	assert.Equal(t, "w", now.Data["k"])
	assert.Equal(t, "v", first.Data["k"], "an object handed out is never changed by the cache")

	// Unstructured reads name their kind with an object.
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	got, err := c.GetShared(ctx, client.ObjectKey{Namespace: ns, Name: "cm-1"}, u)
	require.NoError(t, err)
	require.IsType(t, &unstructured.Unstructured{}, got)
	assert.Equal(t, "cm-1", got.GetName())
	assert.Empty(t, u.GetName(), "the object naming the kind is not filled")
}

func TestUnstructuredAndMetadataShapes(t *testing.T) {
	ns := newNamespace(t)
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.kubeloop.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": ns, "labels": map[string]any{"app": "x"}},
		"spec":     map[string]any{"size": int64(3)},
	}}
	created, err := dyn.Resource(widgetGVR).Namespace(ns).Create(context.Background(), w, metav1.CreateOptions{})
	require.NoError(t, err)
	c := startCache(t, cfg, cache.Options{})
	ctx := ctxTimeout(t, time.Minute)
	key := client.ObjectKey{Namespace: ns, Name: "w1"}
	gvk := schema.GroupVersionKind{Group: "test.kubeloop.io", Version: "v1", Kind: "Widget"}

	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	require.NoError(t, c.Get(ctx, key, u))
	size, _, _ := unstructured.NestedInt64(u.Object, "spec", "size")
	assert.EqualValues(t, 3, size)
	assert.Equal(t, created.GetResourceVersion(), u.GetResourceVersion())

	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	require.NoError(t, c.Get(ctx, key, m))
	assert.Equal(t, "x", m.Labels["app"])
	assert.Equal(t, gvk, m.GroupVersionKind())
	assert.Equal(t, created.GetResourceVersion(), m.ResourceVersion)

	ml := &metav1.PartialObjectMetadataList{}
	ml.SetGroupVersionKind(gvk.GroupVersion().WithKind("WidgetList"))
	require.NoError(t, c.List(ctx, ml, client.InNamespace(ns)))
	require.Len(t, ml.Items, 1)
	assert.Equal(t, "w1", ml.Items[0].Name)
	ul := &unstructured.UnstructuredList{}
	ul.SetGroupVersionKind(gvk.GroupVersion().WithKind("WidgetList"))
	require.NoError(t, c.List(ctx, ul, client.InNamespace(ns), client.MatchingLabels{"app": "x"}))
	require.Len(t, ul.Items, 1)

	// Separate informers per shape.
	ui, err := c.GetInformer(ctx, u)
	require.NoError(t, err)
	mi, err := c.GetInformer(ctx, m)
	require.NoError(t, err)
	assert.NotSame(t, ui, mi)
	assert.EqualValues(t, 2, c.LazyInformerStarts(), "one lazy start per shape")
}

func TestStrictMode(t *testing.T) {
	ns := newNamespace(t)
	createConfigMaps(t, ns, "cm", 1, nil)
	c := startCache(t, cfg, cache.Options{ReaderFailOnMissingInformer: true})
	ctx := ctxTimeout(t, time.Minute)
	key := client.ObjectKey{Namespace: ns, Name: "cm-0"}

	err := c.Get(ctx, key, &corev1.ConfigMap{})
	require.ErrorIs(t, err, cache.ErrResourceNotCached{})
	assert.ErrorContains(t, err, "get v1, Kind=ConfigMap "+ns+"/cm-0: ")
	var notCached cache.ErrResourceNotCached
	require.ErrorAs(t, err, &notCached)
	assert.Equal(t, "ConfigMap", notCached.GVK.Kind)
	err = c.List(ctx, &corev1.ConfigMapList{})
	require.ErrorIs(t, err, cache.ErrResourceNotCached{})
	_, err = client.GetShared[*corev1.ConfigMap](ctx, c, key)
	require.ErrorIs(t, err, cache.ErrResourceNotCached{})
	assert.ErrorContains(t, err, "get v1, Kind=ConfigMap "+ns+"/cm-0: ")

	_, err = c.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	require.NoError(t, c.Get(ctx, key, &corev1.ConfigMap{}))
	_, err = client.GetShared[*corev1.ConfigMap](ctx, c, key)
	require.NoError(t, err)
	assert.Zero(t, c.LazyInformerStarts())
}

func TestReadBeforeStart(t *testing.T) {
	c, err := cache.New(cfg, cache.Options{})
	require.NoError(t, err)
	err = c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "x"}, &corev1.ConfigMap{})
	assert.True(t, errors.Is(err, &cache.ErrCacheNotStarted{}), "got %v", err)
	var notStarted *cache.ErrCacheNotStarted
	assert.True(t, errors.As(err, &notStarted), "errors.As finds the type")
}

// deepCopy asks a Get for a deep copy explicitly.
type deepCopy struct{}

func (deepCopy) ApplyToGet(o *client.GetOptions) { o.UnsafeDisableDeepCopy = ptr.To(false) }
