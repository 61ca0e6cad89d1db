package client_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/client/fake"
)

// TestBadInputThroughCache runs the bad-input cases against the client the
// manager builds, which reads from a cache: its checks and errors must be
// the live client's.
func TestBadInputThroughCache(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	informers, err := cache.New(restConfig, cache.Options{Logger: logr.FromSlogHandler(slog.DiscardHandler)})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- informers.Start(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	c, err := client.New(restConfig, client.Options{Cache: &client.CacheOptions{Reader: informers, Progress: informers, Shared: informers}})
	require.NoError(t, err)
	for _, tc := range badInputCases() {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, ctx, c, newNamespace(t, ctx, c))
		})
	}
}

// unregistered is a Go type no scheme knows.
type unregistered struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func (u *unregistered) DeepCopyObject() runtime.Object {
	out := *u
	u.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

func badInputCases() []conformanceCase {
	return []conformanceCase{
		{name: "bad input gives clear errors", run: func(t *testing.T, ctx context.Context, c client.Client, ns string) {
			var nilCM *corev1.ConfigMap
			assert.ErrorIs(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "x"}, nilCM), client.ErrNilObject)
			assert.ErrorIs(t, c.Create(ctx, nilCM), client.ErrNilObject)
			assert.ErrorIs(t, c.Update(ctx, nil), client.ErrNilObject)

			err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "x"}, &unregistered{})
			assert.ErrorIs(t, err, apiutil.ErrUnknownType)
			assert.ErrorContains(t, err, "unregistered")

			err = c.Get(ctx, client.ObjectKey{Namespace: ns}, &corev1.ConfigMap{})
			assert.ErrorIs(t, err, client.ErrNameRequired)
			assert.ErrorContains(t, err, "get v1, Kind=ConfigMap")
			assert.ErrorIs(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns}}), client.ErrNameRequired)

			if _, isFake := c.(*fake.Client); !isFake {
				// The fake keeps a namespaced object without a namespace
				// under "", as controller-runtime's fake does
				// (TestNamespacedWithoutNamespace in client/fake).
				err = c.Create(ctx, newConfigMap("", "no-namespace", nil))
				assert.ErrorIs(t, err, client.ErrNamespaceRequired)

				// The cached path checks keys as the live one does, with the
				// same prefix: an empty name or namespace is a programming
				// error, not a NotFound for IgnoreNotFound to hide.
				err = c.Get(ctx, client.ObjectKey{Name: "x"}, &corev1.ConfigMap{})
				assert.ErrorIs(t, err, client.ErrNamespaceRequired)
				assert.False(t, apierrors.IsNotFound(err), "not a NotFound: %v", err)
				assert.ErrorContains(t, err, "get v1, Kind=ConfigMap x: ")
			}
			err = c.Get(ctx, client.ObjectKey{Namespace: "Not_A_Namespace", Name: "x"}, &corev1.ConfigMap{})
			assert.ErrorIs(t, err, client.ErrNamespaceInvalid)
			assert.ErrorContains(t, err, `"Not_A_Namespace"`)
			err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "missing"}, &corev1.ConfigMap{})
			assert.True(t, apierrors.IsNotFound(err), "a missing object: %v", err)
			assert.EqualError(t, err, `configmaps "missing" not found`, "the API server's error as it is, as controller-runtime returns it")

			err = c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns), client.HasLabels{"not a valid key!"})
			assert.ErrorContains(t, err, "invalid label selector")
			assert.ErrorContains(t, err, "list v1, Kind=ConfigMap")

			// A label value that would add a requirement is refused, not
			// sent (selector injection); so is one DeleteAllOf would use.
			err = c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns), client.MatchingLabels{"app": "x,tier!=prod"})
			assert.ErrorContains(t, err, "invalid label selector")
			err = c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns), client.MatchingLabels{"not a valid key!": "v"})
			assert.ErrorContains(t, err, "invalid label selector")

			assert.ErrorContains(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "x"}, &unstructured.Unstructured{}), "apiVersion and kind")

			cm := newConfigMap(ns, "patched", nil)
			err = c.Patch(ctx, cm, client.MergeFrom(&corev1.Secret{}))
			assert.ErrorContains(t, err, "original is *v1.Secret but the object is *v1.ConfigMap")
			assert.ErrorContains(t, err, "patch v1, Kind=ConfigMap "+ns+"/patched")

			err = c.Patch(ctx, cm, client.RawPatch("application/merge-patch+json", []byte(`{}`)), client.ForceOwnership)
			assert.ErrorContains(t, err, "ForceOwnership is only valid for apply patches")
		}},
	}
}
