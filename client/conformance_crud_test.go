package client_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
)

func crudCases() []conformanceCase {
	return []conformanceCase{
		{name: "typed create get update list delete", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			cm := newConfigMap(ns, "one", map[string]string{"k": "v"})
			cm.Labels = map[string]string{"team": "a"}
			require.NoError(t, c.Create(ctx, cm))
			assert.NotEmpty(t, cm.UID)
			assert.NotEmpty(t, cm.ResourceVersion)
			assert.False(t, cm.CreationTimestamp.IsZero())
			assert.Zero(t, cm.Generation, "kinds without a spec have no generation")

			var got corev1.ConfigMap
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), &got))
			assert.Equal(t, "v", got.Data["k"])
			assert.Equal(t, cm.ResourceVersion, got.ResourceVersion)
			assert.Empty(t, got.Kind, "typed objects come back without TypeMeta")

			got.Data["k"] = "w"
			require.NoError(t, c.Update(ctx, &got))
			assert.NotEqual(t, cm.ResourceVersion, got.ResourceVersion)

			require.NoError(t, c.Create(ctx, newConfigMap(ns, "two", nil)))
			var all corev1.ConfigMapList
			require.NoError(t, c.List(ctx, &all, client.InNamespace(ns)))
			names := []string{}
			for _, item := range all.Items {
				if item.Name != "kube-root-ca.crt" {
					names = append(names, item.Name)
				}
			}
			assert.Equal(t, []string{"one", "two"}, names)
			assert.NotEmpty(t, all.ResourceVersion)

			var labelled corev1.ConfigMapList
			require.NoError(t, c.List(ctx, &labelled, client.InNamespace(ns), client.MatchingLabels{"team": "a"}))
			require.Len(t, labelled.Items, 1)
			assert.Equal(t, "w", labelled.Items[0].Data["k"])

			require.NoError(t, c.Delete(ctx, &got))
			err := c.Get(ctx, client.ObjectKeyFromObject(cm), &got)
			assert.True(t, apierrors.IsNotFound(err), "got %v", err)
			assert.EqualError(t, err, `configmaps "one" not found`, "the API server's error as it is, as controller-runtime returns it")
			assert.NoError(t, client.IgnoreNotFound(err))
			assert.True(t, apierrors.IsNotFound(c.Delete(ctx, &got)))
		}},
		{name: "generateName", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "gen-"}}
			require.NoError(t, c.Create(ctx, cm))
			assert.Regexp(t, `^gen-[a-z0-9]{5}$`, cm.Name)
		}},
		{name: "create twice is AlreadyExists", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			require.NoError(t, c.Create(ctx, newConfigMap(ns, "dup", nil)))
			err := c.Create(ctx, newConfigMap(ns, "dup", nil))
			assert.True(t, apierrors.IsAlreadyExists(err), "got %v", err)
			assert.NoError(t, client.IgnoreAlreadyExists(err))
		}},
		{name: "stale update is a 409 conflict", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			cm := newConfigMap(ns, "cm", map[string]string{"n": "0"})
			require.NoError(t, c.Create(ctx, cm))
			stale := cm.DeepCopy()
			cm.Data["n"] = "1"
			require.NoError(t, c.Update(ctx, cm))
			stale.Data["n"] = "2"
			err := c.Update(ctx, stale)
			assert.True(t, apierrors.IsConflict(err), "got %v", err)
			var got corev1.ConfigMap
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), &got))
			assert.Equal(t, "1", got.Data["n"])
		}},
		{name: "update without resourceVersion", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			require.NoError(t, c.Create(ctx, newConfigMap(ns, "uncond", nil)))
			assert.NoError(t, c.Update(ctx, newConfigMap(ns, "uncond", map[string]string{"a": "b"})), "built-in kinds allow unconditional updates")
			require.NoError(t, c.Create(ctx, newWidget(ns, "uncond")))
			err := c.Update(ctx, newWidget(ns, "uncond"))
			assert.True(t, apierrors.IsInvalid(err), "custom resources need a resourceVersion: %v", err)
		}},
		{name: "update without change keeps resourceVersion", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			cm := newConfigMap(ns, "same", map[string]string{"a": "b"})
			require.NoError(t, c.Create(ctx, cm))
			rv := cm.ResourceVersion
			require.NoError(t, c.Update(ctx, cm))
			assert.Equal(t, rv, cm.ResourceVersion)
		}},
		{name: "unstructured custom resource", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			w := newWidget(ns, "w1")
			require.NoError(t, unstructured.SetNestedField(w.Object, int64(3), "spec", "size"))
			require.NoError(t, c.Create(ctx, w))
			assert.NotEmpty(t, w.GetResourceVersion())
			assert.Equal(t, int64(1), w.GetGeneration())

			got := newWidget("", "")
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w1"}, got))
			size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size")
			assert.Equal(t, int64(3), size)
			assert.Equal(t, "Widget", got.GetKind())

			require.NoError(t, unstructured.SetNestedField(got.Object, int64(4), "spec", "size"))
			require.NoError(t, c.Update(ctx, got))
			assert.Equal(t, int64(2), got.GetGeneration(), "a spec change bumps generation")

			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(widgetGVK.GroupVersion().WithKind("WidgetList"))
			require.NoError(t, c.List(ctx, list, client.InNamespace(ns)))
			require.Len(t, list.Items, 1)
			assert.Equal(t, "w1", list.Items[0].GetName())

			require.NoError(t, c.Delete(ctx, got))
			assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w1"}, got)))
		}},
		{name: "cluster-scoped custom resource", run: func(t *testing.T, ctx context.Context, c client.Client, _ string) {
			name := randName("cw")
			cw := &unstructured.Unstructured{}
			cw.SetGroupVersionKind(clusterWidgetGVK)
			cw.SetName(name)
			cw.Object["spec"] = map[string]any{"x": "y"}
			require.NoError(t, c.Create(ctx, cw))
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(clusterWidgetGVK)
			require.NoError(t, c.Get(ctx, client.ObjectKey{Name: name}, got))
			assert.Equal(t, "y", got.Object["spec"].(map[string]any)["x"])
			assert.Empty(t, got.GetNamespace())
			namespaced, err := c.IsObjectNamespaced(got)
			require.NoError(t, err)
			assert.False(t, namespaced)
			require.NoError(t, c.Delete(ctx, got))
		}},
		{name: "metadata only", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			cm := newConfigMap(ns, "meta", map[string]string{"big": "value"})
			cm.Labels = map[string]string{"x": "1"}
			require.NoError(t, c.Create(ctx, cm))

			pom := &metav1.PartialObjectMetadata{}
			pom.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), pom))
			assert.Equal(t, cm.UID, pom.UID)
			assert.Equal(t, "ConfigMap", pom.Kind)
			assert.Equal(t, "1", pom.Labels["x"])

			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
			require.NoError(t, c.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{"x": "1"}))
			require.Len(t, list.Items, 1)
			assert.Equal(t, "meta", list.Items[0].Name)
			assert.Equal(t, "ConfigMap", list.Items[0].Kind)

			before := pom.DeepCopy()
			pom.Labels["y"] = "2"
			require.NoError(t, c.Patch(ctx, pom, client.MergeFrom(before)))
			assert.Equal(t, "2", pom.Labels["y"])
			var typed corev1.ConfigMap
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), &typed))
			assert.Equal(t, "2", typed.Labels["y"])
			assert.Equal(t, "value", typed.Data["big"], "a metadata patch keeps the rest")

			assert.ErrorIs(t, c.Create(ctx, &metav1.PartialObjectMetadata{TypeMeta: pom.TypeMeta,
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "new"}}), client.ErrNotSupported)
			require.NoError(t, c.Delete(ctx, pom))
			assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(cm), &typed)))
		}},
		{name: "DeleteAllOf with a label selector", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			for i, team := range []string{"a", "a", "b"} {
				cm := newConfigMap(ns, randName("d")+string(rune('a'+i)), nil)
				cm.Labels = map[string]string{"team": team}
				require.NoError(t, c.Create(ctx, cm))
			}
			require.NoError(t, c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns), client.MatchingLabels{"team": "a"}))
			var left corev1.ConfigMapList
			require.NoError(t, c.List(ctx, &left, client.InNamespace(ns), client.HasLabels{"team"}))
			require.Len(t, left.Items, 1)
			assert.Equal(t, "b", left.Items[0].Labels["team"])
		}},
		{name: "DeleteAllOf without namespace or selector is refused unless DeleteEverything", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			cw := &unstructured.Unstructured{}
			cw.SetGroupVersionKind(clusterWidgetGVK)
			cw.SetName(randName("keep"))
			cw.SetLabels(map[string]string{"case": cw.GetName()})
			require.NoError(t, c.Create(ctx, cw))
			defer func() { _ = c.Delete(ctx, cw) }()
			kind := func() *unstructured.Unstructured {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(clusterWidgetGVK)
				return u
			}
			for _, opts := range [][]client.DeleteAllOfOption{
				nil,
				{client.MatchingLabels{}}, // an empty user-derived selector selects everything
				{client.MatchingLabels(map[string]string(nil)), client.GracePeriodSeconds(0)},
			} {
				err := c.DeleteAllOf(ctx, kind(), opts...)
				require.ErrorIs(t, err, client.ErrDeleteEverything, "options %v", opts)
				assert.ErrorContains(t, err, "delete all of test.kubeloop.dev/v1, Kind=ClusterWidget")
				assert.ErrorContains(t, err, "client.DeleteEverything")
			}
			// A namespaced kind across every namespace is refused before any
			// request too (the server would answer 405 anyway).
			assert.ErrorIs(t, c.DeleteAllOf(ctx, &corev1.ConfigMap{}), client.ErrDeleteEverything)
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cw), kind()), "nothing was deleted")
			// Saying so explicitly goes through (dry run: the package's
			// control plane is shared).
			require.NoError(t, c.DeleteAllOf(ctx, kind(), client.DeleteEverything, client.DryRunAll))
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cw), kind()))
			err := c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.DeleteEverything, client.DryRunAll)
			assert.True(t, apierrors.IsMethodNotSupported(err), "a namespaced kind has no cluster-wide delete collection: %v", err)
			// A selector is scope enough.
			require.NoError(t, c.DeleteAllOf(ctx, kind(), client.MatchingLabels{"case": cw.GetName()}))
			assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(cw), kind())))
		}},
		{name: "List pages with Limit and Continue", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			for _, n := range []string{"p1", "p2", "p3"} {
				cm := newConfigMap(ns, n, nil)
				cm.Labels = map[string]string{"page": "yes"}
				require.NoError(t, c.Create(ctx, cm))
			}
			var first corev1.ConfigMapList
			require.NoError(t, c.List(ctx, &first, client.InNamespace(ns), client.MatchingLabels{"page": "yes"}, client.Limit(2)))
			require.Len(t, first.Items, 2)
			require.NotEmpty(t, first.Continue)
			var second corev1.ConfigMapList
			require.NoError(t, c.List(ctx, &second, client.InNamespace(ns), client.MatchingLabels{"page": "yes"},
				client.Limit(2), client.Continue(first.Continue)))
			require.Len(t, second.Items, 1)
			assert.Equal(t, "p3", second.Items[0].Name)
			assert.Empty(t, second.Continue)
		}},
		{name: "field selector on metadata.name", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			require.NoError(t, c.Create(ctx, newConfigMap(ns, "f1", nil)))
			require.NoError(t, c.Create(ctx, newConfigMap(ns, "f2", nil)))
			var list corev1.ConfigMapList
			require.NoError(t, c.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{"metadata.name": "f2"}))
			require.Len(t, list.Items, 1)
			assert.Equal(t, "f2", list.Items[0].Name)
		}},
		{name: "finalizers delay deletion", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			cm := newConfigMap(ns, "fin", nil)
			cm.Finalizers = []string{"test.kubeloop.dev/hold"}
			require.NoError(t, c.Create(ctx, cm))
			require.NoError(t, c.Delete(ctx, cm))
			var got corev1.ConfigMap
			require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), &got))
			require.NotNil(t, got.DeletionTimestamp)

			extra := got.DeepCopy()
			extra.Finalizers = append(extra.Finalizers, "test.kubeloop.dev/other")
			err := c.Update(ctx, extra)
			assert.True(t, apierrors.IsInvalid(err), "adding a finalizer while deleting: %v", err)

			got.Finalizers = nil
			require.NoError(t, c.Update(ctx, &got))
			assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(cm), &got)))
		}},
		{name: "delete preconditions", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			cm := newConfigMap(ns, "pre", nil)
			require.NoError(t, c.Create(ctx, cm))
			err := c.Delete(ctx, cm, client.Preconditions{UID: ptrTo(types.UID("not-the-uid"))})
			assert.True(t, apierrors.IsConflict(err), "got %v", err)
			require.NoError(t, c.Delete(ctx, cm, client.Preconditions{UID: ptrTo(cm.UID)}))
		}},
		{name: "dry run persists nothing", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			require.NoError(t, c.Create(ctx, newConfigMap(ns, "dry", nil), client.DryRunAll))
			var got corev1.ConfigMap
			assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "dry"}, &got)))
		}},
	}
}

func ptrTo[T any](v T) *T { return &v }
