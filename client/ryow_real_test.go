package client_test

import (
	"context"
	"log/slog"
	"strconv"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
)

// TestReadYourOwnWritesWithRealCache writes through the cached client and
// reads back at once, many times, with Get and with GetShared: every read
// must see at least the resourceVersion just written, although the
// informer lags the API server.
func TestReadYourOwnWritesWithRealCache(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	informers, err := cache.New(restConfig, cache.Options{Logger: logr.FromSlogHandler(slog.DiscardHandler)})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- informers.Start(ctx) }()
	defer func() {
		cancel()
		<-done
	}()

	c, err := client.New(restConfig, client.Options{Cache: &client.CacheOptions{Reader: informers, Progress: informers, Shared: informers}})
	require.NoError(t, err)
	live, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := newNamespace(t, ctx, live)
	cm := newConfigMap(ns, "ryow", map[string]string{"i": "0"})
	require.NoError(t, c.Create(ctx, cm))
	key := client.ObjectKeyFromObject(cm)

	for i := 1; i <= 30; i++ {
		cm.Data = map[string]string{"i": strconv.Itoa(i)}
		require.NoError(t, c.Update(ctx, cm))
		written, err := strconv.ParseUint(cm.ResourceVersion, 10, 64)
		require.NoError(t, err)

		var got corev1.ConfigMap
		require.NoError(t, c.Get(ctx, key, &got))
		seen, err := strconv.ParseUint(got.ResourceVersion, 10, 64)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, seen, written, "read %d went back in time", i)
		assert.Equal(t, strconv.Itoa(i), got.Data["i"])

		cm.Data = map[string]string{"i": strconv.Itoa(i) + "-shared"}
		require.NoError(t, c.Update(ctx, cm))
		written, err = strconv.ParseUint(cm.ResourceVersion, 10, 64)
		require.NoError(t, err)
		shared, err := client.GetShared[*corev1.ConfigMap](ctx, c, key)
		require.NoError(t, err)
		seen, err = strconv.ParseUint(shared.ResourceVersion, 10, 64)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, seen, written, "shared read %d went back in time", i)
		assert.Equal(t, strconv.Itoa(i)+"-shared", shared.Data["i"])
	}

	require.NoError(t, c.Delete(ctx, cm))
	err = c.Get(ctx, key, &corev1.ConfigMap{})
	assert.True(t, apierrors.IsNotFound(err), "a read after Delete does not return the deleted object: %v", err)
	_, err = client.GetShared[*corev1.ConfigMap](ctx, c, key)
	assert.True(t, apierrors.IsNotFound(err), "nor does a shared read: %v", err)
	assert.Equal(t, 0, client.TrackedWrites(c), "every remembered write is forgotten once the cache caught up: %v", client.TrackedStates(c))
}
