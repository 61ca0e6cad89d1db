package fake_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
)

// next returns the next event, failing the test when none arrives.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "the result channel is open")
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
		return watch.Event{}
	}
}

// describe is "TYPE namespace/name key=value" of a ConfigMap event.
func describe(t *testing.T, ev watch.Event) string {
	t.Helper()
	cm, ok := ev.Object.(*corev1.ConfigMap)
	require.True(t, ok, "a typed watch delivers %T, got %T", &corev1.ConfigMap{}, ev.Object)
	return fmt.Sprintf("%s %s/%s %s", ev.Type, cm.Namespace, cm.Name, cm.Data["k"])
}

func assertQuiet(t *testing.T, w watch.Interface) {
	t.Helper()
	select {
	case ev := <-w.ResultChan():
		t.Fatalf("unexpected event %s %T", ev.Type, ev.Object)
	default:
	}
}

func TestWatchSendsExistingThenChanges(t *testing.T) {
	ctx := t.Context()
	fc, err := fake.NewClientBuilder().WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "one", Labels: map[string]string{"app": "x"}}, Data: map[string]string{"k": "1"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "other", Labels: map[string]string{"app": "x"}}},
	).BuildClient()
	require.NoError(t, err)
	var wc client.WithWatch = fc
	w, err := wc.Watch(ctx, &corev1.ConfigMapList{}, client.InNamespace("a"), client.MatchingLabels{"app": "x"})
	require.NoError(t, err)
	defer w.Stop()
	assert.Equal(t, "ADDED a/one 1", describe(t, next(t, w)), "an existing match first")

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "two", Labels: map[string]string{"app": "x"}}, Data: map[string]string{"k": "2"}}
	require.NoError(t, fc.Create(ctx, cm))
	ev := next(t, w)
	assert.Equal(t, "ADDED a/two 2", describe(t, ev))
	assert.Equal(t, cm.ResourceVersion, ev.Object.(*corev1.ConfigMap).ResourceVersion)

	require.NoError(t, fc.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "skipped", Labels: map[string]string{"app": "x"}}}))
	require.NoError(t, fc.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "unlabelled"}}))

	cm.Data["k"] = "3"
	require.NoError(t, fc.Update(ctx, cm))
	assert.Equal(t, "MODIFIED a/two 3", describe(t, next(t, w)), "other namespaces and labels are filtered out")

	cm.Labels = nil
	cm.Data["k"] = "4"
	require.NoError(t, fc.Update(ctx, cm))
	assert.Equal(t, "DELETED a/two 4", describe(t, next(t, w)), "modified out of the selection")

	cm.Labels = map[string]string{"app": "x"}
	require.NoError(t, fc.Update(ctx, cm))
	assert.Equal(t, "ADDED a/two 4", describe(t, next(t, w)), "modified into the selection")

	require.NoError(t, fc.Delete(ctx, cm))
	ev = next(t, w)
	assert.Equal(t, "DELETED a/two 4", describe(t, ev))
	assert.NotEqual(t, cm.ResourceVersion, ev.Object.(*corev1.ConfigMap).ResourceVersion, "a delete has a resourceVersion of its own")
	assertQuiet(t, w)

	w.Stop()
	_, open := <-w.ResultChan()
	assert.False(t, open, "Stop closes the result channel")
	w.Stop()
}

func TestWatchFromListResourceVersion(t *testing.T) {
	ctx := t.Context()
	fc, err := fake.NewClientBuilder().WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "old"}},
	).BuildClient()
	require.NoError(t, err)
	var list corev1.ConfigMapList
	require.NoError(t, fc.List(ctx, &list))
	// A write between the List and the Watch is not lost.
	require.NoError(t, fc.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "between"}}))

	w, err := fc.Watch(ctx, &corev1.ConfigMapList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	require.NoError(t, err)
	defer w.Stop()
	assert.Equal(t, "ADDED a/between ", describe(t, next(t, w)), "no replay of what the List returned; the change after it")
	assertQuiet(t, w)

	_, err = fc.Watch(ctx, &corev1.ConfigMapList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "nope"}})
	assert.True(t, apierrors.IsBadRequest(err), "got %v", err)
}

func TestWatchTooOldResourceVersion(t *testing.T) {
	ctx := t.Context()
	fc, err := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "first"}}).BuildClient()
	require.NoError(t, err)
	var list corev1.ConfigMapList
	require.NoError(t, fc.List(ctx, &list))
	require.NotEqual(t, "0", list.ResourceVersion)
	for i := range 1100 {
		require.NoError(t, fc.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: fmt.Sprint("cm-", i)}}))
	}
	_, err = fc.Watch(ctx, &corev1.ConfigMapList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	assert.True(t, apierrors.IsResourceExpired(err), "410 when the history no longer reaches back, got %v", err)
}

func TestWatchUnstructuredAndContext(t *testing.T) {
	fc, err := fake.NewClientBuilder().BuildClient()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("v1")
	list.SetKind("ConfigMapList")
	w, err := fc.Watch(ctx, list, client.MatchingFields{"metadata.name": "wanted"})
	require.NoError(t, err)
	require.NoError(t, fc.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "unwanted"}}))
	require.NoError(t, fc.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "wanted"}}))
	ev := next(t, w)
	u, ok := ev.Object.(*unstructured.Unstructured)
	require.True(t, ok, "got %T", ev.Object)
	assert.Equal(t, "wanted", u.GetName())
	assert.Equal(t, "ConfigMap", u.GetKind())

	cancel()
	select {
	case _, open := <-w.ResultChan():
		assert.False(t, open, "the end of the context closes the watch")
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not end with its context")
	}

	_, err = fc.Watch(t.Context(), &corev1.ConfigMapList{}, client.MatchingFields{"data.k": "v"})
	assert.ErrorContains(t, err, "no index", "a field selector needs an index, as List")
}

// A writer is never blocked by a watcher nobody reads.
func TestWatchUnreadDoesNotBlockWriters(t *testing.T) {
	ctx := t.Context()
	fc, err := fake.NewClientBuilder().BuildClient()
	require.NoError(t, err)
	w, err := fc.Watch(ctx, &corev1.ConfigMapList{})
	require.NoError(t, err)
	defer w.Stop()
	for i := range 200 {
		require.NoError(t, fc.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: fmt.Sprint("cm-", i)}}))
	}
	for i := range 200 {
		ev := next(t, w)
		assert.Equal(t, fmt.Sprintf("ADDED a/cm-%d ", i), describe(t, ev))
	}
}
