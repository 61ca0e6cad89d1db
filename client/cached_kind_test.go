package client_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
)

// getCounter counts the Gets that reach it and answers them with an
// empty object.
type getCounter struct {
	client.Reader
	gets *int
}

func (r getCounter) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	*r.gets++
	return nil
}

// TestCachedKindRemembered: the manager's client remembers per Go type
// whether a kind is read from the cache, and answers the same on every
// Get: cached kinds from the cache, DisableFor kinds and unstructured
// objects (Unstructured unset) from the API server, here unreachable.
func TestCachedKindRemembered(t *testing.T) {
	var gets int
	c, err := client.New(&rest.Config{Host: "http://127.0.0.1:1"}, client.Options{Cache: &client.CacheOptions{
		Reader: getCounter{gets: &gets}, DisableFor: []client.Object{&corev1.Secret{}},
	}})
	require.NoError(t, err)
	ctx := t.Context()
	key := client.ObjectKey{Namespace: "default", Name: "x"}
	for i := range 3 {
		require.NoError(t, c.Get(ctx, key, &corev1.ConfigMap{}))
		assert.Equal(t, i+1, gets, "ConfigMaps are read from the cache")
		assert.Error(t, c.Get(ctx, key, &corev1.Secret{}), "Secrets bypass the cache")
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		assert.Error(t, c.Get(ctx, key, u), "unstructured objects bypass the cache")
		assert.Equal(t, i+1, gets)
	}
}
