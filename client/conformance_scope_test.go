package client_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
)

// scopeCases: a namespace on a cluster-scoped kind is ignored, never an
// error, as the API server does; the object comes back without it.
func scopeCases() []conformanceCase {
	return []conformanceCase{
		{name: "Namespace with metadata.namespace set (the scaffolded tests' first object)", run: func(t *testing.T, ctx context.Context, c client.Client, _ string) {
			name := randName("scaffold")
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: name}}
			require.NoError(t, c.Create(ctx, ns))
			assert.Empty(t, ns.Namespace, "the server's answer has no namespace")
			assert.NotEmpty(t, ns.UID)

			var got corev1.Namespace
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: name, Name: name}, &got))
			assert.Equal(t, ns.UID, got.UID)

			got.Namespace = "elsewhere"
			got.Labels = map[string]string{"a": "1"}
			require.NoError(t, c.Update(ctx, &got))
			assert.Empty(t, got.Namespace)

			before := got.DeepCopy()
			got.Namespace = "elsewhere"
			got.Labels["b"] = "2"
			require.NoError(t, c.Patch(ctx, &got, client.MergeFrom(before)))
			assert.Equal(t, "2", got.Labels["b"])
			assert.Empty(t, got.Namespace)

			got.Namespace = "elsewhere"
			require.NoError(t, c.Status().Update(ctx, &got))
			assert.Empty(t, got.Namespace)

			require.NoError(t, c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: name}}))
		}},
		{name: "ClusterRole with metadata.namespace set", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			name := randName("role")
			role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"case": name}}}
			require.NoError(t, c.Create(ctx, role))
			assert.Empty(t, role.Namespace)

			var got rbacv1.ClusterRole
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &got))
			require.NoError(t, c.Get(ctx, client.ObjectKey{Name: name}, &got))

			ac := rbacv1ac.ClusterRole(name).WithNamespace(ns).WithAnnotations(map[string]string{"applied": "yes"})
			require.NoError(t, c.Apply(ctx, ac, client.FieldOwner("scope-test"), client.ForceOwnership))
			require.NoError(t, c.Get(ctx, client.ObjectKey{Name: name}, &got))
			assert.Equal(t, "yes", got.Annotations["applied"])
			assert.Empty(t, got.Namespace)

			var list rbacv1.ClusterRoleList
			require.NoError(t, c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"case": name}))
			require.Len(t, list.Items, 1, "InNamespace is ignored for a cluster-scoped kind")

			got.Namespace = ns
			require.NoError(t, c.Delete(ctx, &got))
			assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &got)))
		}},
		{name: "cluster-scoped custom resource with metadata.namespace set", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			name := randName("cw")
			kind := func() *unstructured.Unstructured {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(clusterWidgetGVK)
				return u
			}
			cw := kind()
			cw.SetName(name)
			cw.SetNamespace(ns)
			cw.SetLabels(map[string]string{"case": name})
			require.NoError(t, c.Create(ctx, cw))
			assert.Empty(t, cw.GetNamespace())

			got := kind()
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, got))
			got.SetNamespace(ns)
			got.SetAnnotations(map[string]string{"u": "1"})
			require.NoError(t, c.Update(ctx, got))
			assert.Empty(t, got.GetNamespace())

			// The namespace does not narrow a cluster-scoped DeleteAllOf:
			// without a selector it would delete every object.
			assert.ErrorIs(t, c.DeleteAllOf(ctx, kind(), client.InNamespace(ns)), client.ErrDeleteEverything)
			require.NoError(t, c.DeleteAllOf(ctx, kind(), client.InNamespace(ns), client.MatchingLabels{"case": name}))
			// DeleteAllOf is not remembered for read-your-own-writes: a
			// cached client sees the delete when its cache does.
			assert.Eventually(t, func() bool {
				return apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: name}, kind()))
			}, 10*time.Second, 10*time.Millisecond)
		}},
	}
}

// TestScopeThroughWrappers runs the scope cases through the client the
// manager builds (reads from a cache) and through a namespaced client,
// against the real control plane.
func TestScopeThroughWrappers(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	informers, err := cache.New(restConfig, cache.Options{Logger: logr.FromSlogHandler(slog.DiscardHandler)})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- informers.Start(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	cached, err := client.New(restConfig, client.Options{Cache: &client.CacheOptions{Reader: informers, Progress: informers, Shared: informers, Unstructured: true}})
	require.NoError(t, err)
	live, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	for _, w := range []struct {
		name string
		c    func(ns string) client.Client
	}{
		{name: "cached", c: func(string) client.Client { return cached }},
		{name: "namespaced", c: func(ns string) client.Client { return client.NewNamespacedClient(live, ns) }},
		{name: "namespaced over cached", c: func(ns string) client.Client { return client.NewNamespacedClient(cached, ns) }},
	} {
		t.Run(w.name, func(t *testing.T) {
			for _, tc := range scopeCases() {
				t.Run(tc.name, func(t *testing.T) {
					ns := newNamespace(t, ctx, live)
					tc.run(t, ctx, w.c(ns), ns)
				})
			}
		})
	}
}

// TestScopeDryRun: a dry-run write of a cluster-scoped object with a
// namespace is answered as the real one, and persists nothing.
func TestScopeDryRun(t *testing.T) {
	ctx := t.Context()
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			c := client.NewDryRunClient(b.new(t))
			name := randName("dry")
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: name}}
			require.NoError(t, c.Create(ctx, ns))
			assert.Empty(t, ns.Namespace)
			assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: name, Name: name}, &corev1.Namespace{})))
		})
	}
}
