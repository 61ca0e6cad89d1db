package client_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
)

// sharedLaggingCache is a laggingCache that hands out what it holds
// without copying, as the real cache does: the same object for every read
// until the object changes.
type sharedLaggingCache struct {
	*laggingCache
	held map[client.ObjectKey]*corev1.ConfigMap
}

func (s *sharedLaggingCache) GetShared(ctx context.Context, key client.ObjectKey, obj client.Object) (client.Object, error) {
	var cm corev1.ConfigMap
	if err := s.Get(ctx, key, &cm); err != nil {
		return nil, err
	}
	if held := s.held[key]; held != nil && held.ResourceVersion == cm.ResourceVersion {
		return held, nil
	}
	s.held[key] = &cm
	return &cm, nil
}

func TestGetSharedReadsYourOwnWrites(t *testing.T) {
	key := client.ObjectKey{Namespace: "ns", Name: "cm"}
	tests := []struct {
		name      string
		lag       time.Duration
		del       bool
		wantFound bool
		wantLive  int32
		wantWait  time.Duration
	}{
		{name: "update seen once the cache catches up", lag: 300 * time.Millisecond, wantFound: true, wantWait: 300 * time.Millisecond},
		{name: "update read from the API server when the cache stays behind", lag: time.Hour, wantFound: true, wantLive: 1, wantWait: 2 * time.Second},
		{name: "delete: the cache still has the object", lag: time.Hour, del: true, wantLive: 1, wantWait: 2 * time.Second},
		{name: "delete seen by the cache at once", del: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				var shared *sharedLaggingCache
				c, lagging, liveGets := ryowSetupWith(t, 0, func(l *laggingCache) client.SharedReader {
					shared = &sharedLaggingCache{laggingCache: l, held: map[client.ObjectKey]*corev1.ConfigMap{}}
					return shared
				})

				cm := newConfigMap("ns", "cm", map[string]string{"v": "old"})
				require.NoError(t, c.Create(ctx, cm))
				before, err := client.GetShared[*corev1.ConfigMap](ctx, c, key)
				require.NoError(t, err)
				lagging.freeze(t, ctx, key, tt.lag)
				if tt.del {
					require.NoError(t, c.Delete(ctx, cm))
				} else {
					cm.Data = map[string]string{"v": "new"}
					require.NoError(t, c.Update(ctx, cm))
				}

				start := time.Now()
				got, err := client.GetShared[*corev1.ConfigMap](ctx, c, key)
				waited := time.Since(start)
				if tt.wantFound {
					require.NoError(t, err)
					assert.Equal(t, "new", got.Data["v"])
					assert.Equal(t, cm.ResourceVersion, got.ResourceVersion)
					if tt.wantLive == 0 {
						assert.Same(t, shared.held[key], got, "the cache's own object")
					}
				} else {
					assert.True(t, apierrors.IsNotFound(err), "got %v", err)
				}
				assert.Equal(t, "old", before.Data["v"], "an object handed out earlier is unchanged")
				assert.Equal(t, tt.wantLive, liveGets.Load(), "reads from the API server")
				assert.GreaterOrEqual(t, waited, tt.wantWait, "time waited for the cache")
				assert.LessOrEqual(t, waited, tt.wantWait+100*time.Millisecond, "time waited for the cache")
			})
		})
	}
}

func TestGetSharedFromSharedCache(t *testing.T) {
	ctx := t.Context()
	server := fake.NewClientBuilder().WithObjects(newConfigMap("ns", "cm", map[string]string{"v": "1"})).Build()
	shared := &sharedLaggingCache{laggingCache: &laggingCache{truth: server}, held: map[client.ObjectKey]*corev1.ConfigMap{}}
	c, err := client.NewCachedForTest(server, client.CacheOptions{Reader: shared, Shared: shared, DisableFor: []client.Object{&corev1.Secret{}}})
	require.NoError(t, err)
	key := client.ObjectKey{Namespace: "ns", Name: "cm"}

	a, err := client.GetShared[*corev1.ConfigMap](ctx, c, key)
	require.NoError(t, err)
	b, err := client.GetShared[*corev1.ConfigMap](ctx, c, key)
	require.NoError(t, err)
	assert.Same(t, a, b, "the manager's client hands out what the cache holds")
	assert.Equal(t, "1", a.Data["v"])

	// A kind that bypasses the cache is read from the API server.
	require.NoError(t, server.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}}))
	s, err := client.GetShared[*corev1.Secret](ctx, c, client.ObjectKey{Namespace: "ns", Name: "s"})
	require.NoError(t, err)
	assert.Equal(t, "s", s.Name)
}

func TestGetSharedFallsBackToGet(t *testing.T) {
	ctx := t.Context()
	server := fake.NewClientBuilder().WithObjects(newConfigMap("ns", "cm", map[string]string{"v": "1"})).Build()
	key := client.ObjectKey{Namespace: "ns", Name: "cm"}

	cm, err := client.GetShared[*corev1.ConfigMap](ctx, server, key)
	require.NoError(t, err, "a reader that holds nothing: a Get into a new object")
	assert.Equal(t, "1", cm.Data["v"])
	assert.Equal(t, "cm", cm.Name)

	_, err = client.GetShared[*corev1.ConfigMap](ctx, server, client.ObjectKey{Namespace: "ns", Name: "absent"})
	assert.True(t, apierrors.IsNotFound(err), "got %v", err)

	_, err = client.GetShared[client.Object](ctx, server, key)
	assert.ErrorContains(t, err, "GetShared needs a pointer to a typed object, not client.Object")
	_, err = client.GetShared[*corev1.ConfigMap](ctx, nil, key)
	assert.ErrorContains(t, err, "reader is nil")
}
