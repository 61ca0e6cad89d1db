package client_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeloop/kubeloop/client"
)

func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "the watch is open")
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event")
		return watch.Event{}
	}
}

// TestNewWithWatch watches typed, unstructured and metadata lists against
// the real API server.
func TestNewWithWatch(t *testing.T) {
	ctx := t.Context()
	c, err := client.NewWithWatch(restConfig, client.Options{})
	require.NoError(t, err)
	ns := newNamespace(t, ctx, c)

	var list corev1.ConfigMapList
	require.NoError(t, c.List(ctx, &list, client.InNamespace(ns)))
	typed, err := c.Watch(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns), client.MatchingLabels{"watched": "yes"},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	require.NoError(t, err)
	defer typed.Stop()
	meta := &metav1.PartialObjectMetadataList{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	metaWatch, err := c.Watch(ctx, meta, client.InNamespace(ns),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	require.NoError(t, err)
	defer metaWatch.Stop()

	require.NoError(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unlabelled"}}))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "watched", Labels: map[string]string{"watched": "yes"}}}
	require.NoError(t, c.Create(ctx, cm))
	ev := nextEvent(t, typed)
	assert.Equal(t, watch.Added, ev.Type)
	got, ok := ev.Object.(*corev1.ConfigMap)
	require.True(t, ok, "typed objects, got %T", ev.Object)
	assert.Equal(t, "watched", got.Name, "the label selector applies")

	for _, want := range []string{"unlabelled", "watched"} {
		ev := nextEvent(t, metaWatch)
		pm, ok := ev.Object.(*metav1.PartialObjectMetadata)
		require.True(t, ok, "metadata objects, got %T", ev.Object)
		assert.Equal(t, want, pm.Name)
	}

	w := newWidget(ns, "watched-widget")
	uw := &unstructured.UnstructuredList{}
	uw.SetGroupVersionKind(widgetGVK.GroupVersion().WithKind("WidgetList"))
	unstructuredWatch, err := c.Watch(ctx, uw, client.InNamespace(ns))
	require.NoError(t, err)
	defer unstructuredWatch.Stop()
	require.NoError(t, c.Create(ctx, w))
	ev = nextEvent(t, unstructuredWatch)
	u, ok := ev.Object.(*unstructured.Unstructured)
	require.True(t, ok, "unstructured objects, got %T", ev.Object)
	assert.Equal(t, "watched-widget", u.GetName())
	assert.Equal(t, "Widget", u.GetKind())

	_, err = client.NewWithWatch(restConfig, client.Options{Cache: &client.CacheOptions{}})
	assert.Error(t, err)
}
