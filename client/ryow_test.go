package client_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/client/interceptor"
)

// laggingCache is a deliberately slow cache: objects frozen with freeze
// read as they were until the release time, then as the API server has
// them.
type laggingCache struct {
	truth client.Reader

	mu         sync.Mutex
	frozen     map[client.ObjectKey]client.Object // nil value: not in the cache
	releaseAt  time.Time
	rvOverride string // when set, every cached read reports this resourceVersion
}

func (l *laggingCache) freeze(t *testing.T, ctx context.Context, key client.ObjectKey, lag time.Duration) {
	t.Helper()
	var cm corev1.ConfigMap
	err := l.truth.Get(ctx, key, &cm)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.frozen == nil {
		l.frozen = map[client.ObjectKey]client.Object{}
	}
	if apierrors.IsNotFound(err) {
		l.frozen[key] = nil
	} else {
		require.NoError(t, err)
		l.frozen[key] = &cm
	}
	l.releaseAt = time.Now().Add(lag)
}

func (l *laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	l.mu.Lock()
	frozen, isFrozen := l.frozen[key]
	stale := isFrozen && time.Now().Before(l.releaseAt)
	override := l.rvOverride
	l.mu.Unlock()
	var err error
	switch {
	case stale && frozen == nil:
		err = apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
	case stale:
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(frozen.DeepCopyObject()).Elem())
	default:
		err = l.truth.Get(ctx, key, obj, opts...)
	}
	if err == nil && override != "" {
		obj.SetResourceVersion(override)
	}
	return err
}

func (l *laggingCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return l.truth.List(ctx, list, opts...)
}

// ryowSetup returns a cached client over a fake API server, the cache, and
// a counter of reads that reached the API server.
func ryowSetup(t *testing.T, timeout time.Duration) (client.Client, *laggingCache, *atomic.Int32) {
	t.Helper()
	return ryowSetupWith(t, timeout, nil)
}

// ryowSetupWith is ryowSetup with the cached client reading from
// wrap(cache) when wrap is not nil, and asking it for shared objects.
func ryowSetupWith(t *testing.T, timeout time.Duration, wrap func(*laggingCache) client.SharedReader) (client.Client, *laggingCache, *atomic.Int32) {
	t.Helper()
	server := fake.NewClientBuilder().Build()
	var liveGets atomic.Int32
	live := interceptor.NewClient(server, interceptor.Funcs{
		Get: func(ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			liveGets.Add(1)
			return c.Get(ctx, key, obj, opts...)
		},
	})
	cache := &laggingCache{truth: server}
	opts := client.CacheOptions{Reader: cache, ReadYourOwnWritesTimeout: timeout}
	if wrap != nil {
		shared := wrap(cache)
		opts.Reader, opts.Shared = shared, shared
	}
	c, err := client.NewCachedForTest(live, opts)
	require.NoError(t, err)
	return c, cache, &liveGets
}

func TestReadYourOwnWrites(t *testing.T) {
	key := client.ObjectKey{Namespace: "ns", Name: "cm"}
	tests := []struct {
		name string
		// act writes through c after freezing the cache for lag.
		lag       time.Duration
		act       func(t *testing.T, ctx context.Context, c client.Client, cm *corev1.ConfigMap)
		wantFound bool
		wantData  string
		wantLive  int32
		wantWait  time.Duration
	}{
		{
			name: "update seen once the cache catches up",
			lag:  300 * time.Millisecond,
			act: func(t *testing.T, ctx context.Context, c client.Client, cm *corev1.ConfigMap) {
				cm.Data = map[string]string{"v": "new"}
				require.NoError(t, c.Update(ctx, cm))
			},
			wantFound: true, wantData: "new", wantLive: 0, wantWait: 300 * time.Millisecond,
		},
		{
			name: "update read from the API server when the cache stays behind",
			lag:  time.Hour,
			act: func(t *testing.T, ctx context.Context, c client.Client, cm *corev1.ConfigMap) {
				cm.Data = map[string]string{"v": "new"}
				require.NoError(t, c.Update(ctx, cm))
			},
			wantFound: true, wantData: "new", wantLive: 1, wantWait: 2 * time.Second,
		},
		{
			name: "patch is remembered",
			lag:  time.Hour,
			act: func(t *testing.T, ctx context.Context, c client.Client, cm *corev1.ConfigMap) {
				before := cm.DeepCopy()
				cm.Data = map[string]string{"v": "patched"}
				require.NoError(t, c.Patch(ctx, cm, client.MergeFrom(before)))
			},
			wantFound: true, wantData: "patched", wantLive: 1, wantWait: 2 * time.Second,
		},
		{
			name: "delete: the cache still has the object",
			lag:  time.Hour,
			act: func(t *testing.T, ctx context.Context, c client.Client, cm *corev1.ConfigMap) {
				require.NoError(t, c.Delete(ctx, cm))
			},
			wantFound: false, wantLive: 1, wantWait: 2 * time.Second,
		},
		{
			name: "delete seen by the cache at once",
			lag:  0,
			act: func(t *testing.T, ctx context.Context, c client.Client, cm *corev1.ConfigMap) {
				require.NoError(t, c.Delete(ctx, cm))
			},
			wantFound: false, wantLive: 0, wantWait: 0,
		},
		{
			name: "removing the last finalizer of a deleted object is a delete",
			lag:  0,
			act: func(t *testing.T, ctx context.Context, c client.Client, cm *corev1.ConfigMap) {
				cm.Finalizers = []string{"example.com/hold"}
				require.NoError(t, c.Update(ctx, cm))
				require.NoError(t, c.Delete(ctx, cm))
				require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), cm))
				cm.Finalizers = nil
				require.NoError(t, c.Update(ctx, cm))
			},
			wantFound: false, wantLive: 0, wantWait: 0,
		},
		{
			name: "dry run is not remembered",
			lag:  time.Hour,
			act: func(t *testing.T, ctx context.Context, c client.Client, cm *corev1.ConfigMap) {
				cm.Data = map[string]string{"v": "dry"}
				require.NoError(t, c.Update(ctx, cm, client.DryRunAll))
			},
			wantFound: true, wantData: "old", wantLive: 0, wantWait: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				c, cache, liveGets := ryowSetup(t, 0)
				cm := newConfigMap("ns", "cm", map[string]string{"v": "old"})
				require.NoError(t, c.Create(ctx, cm))
				cache.freeze(t, ctx, key, tt.lag)
				tt.act(t, ctx, c, cm)

				start := time.Now()
				var got corev1.ConfigMap
				err := c.Get(ctx, key, &got)
				waited := time.Since(start)
				if tt.wantFound {
					require.NoError(t, err)
					assert.Equal(t, tt.wantData, got.Data["v"])
				} else {
					assert.True(t, apierrors.IsNotFound(err), "got %v", err)
				}
				assert.Equal(t, tt.wantLive, liveGets.Load(), "reads from the API server")
				// The fake clock makes the wait exact; the cache is polled
				// with a growing interval of at most 100ms.
				assert.GreaterOrEqual(t, waited, tt.wantWait, "time waited for the cache")
				assert.LessOrEqual(t, waited, tt.wantWait+100*time.Millisecond, "time waited for the cache")
			})
		})
	}
}

// staleReader is a cache stuck on one snapshot of one object.
type staleReader struct {
	client.Reader
	snapshot client.Object
}

func (r staleReader) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(r.snapshot.DeepCopyObject()).Elem())
	return nil
}

func TestReadYourOwnWritesEviction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "pod-uid"}}
		server := fake.NewClientBuilder().WithObjects(p).Build()
		var snapshot corev1.Pod
		require.NoError(t, server.Get(ctx, client.ObjectKeyFromObject(p), &snapshot))
		c, err := client.NewCachedForTest(server, client.CacheOptions{Reader: staleReader{Reader: server, snapshot: &snapshot}})
		require.NoError(t, err)

		require.NoError(t, c.SubResource("eviction").Create(ctx, &snapshot, &policyv1.Eviction{}))
		start := time.Now()
		err = c.Get(ctx, client.ObjectKeyFromObject(p), &corev1.Pod{})
		assert.True(t, apierrors.IsNotFound(err), "an evicted pod is not read back from a stale cache: %v", err)
		assert.Equal(t, 2*time.Second, time.Since(start), "after waiting for the cache")
	})
}

func TestReadYourOwnWritesForgetsOnceCaughtUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		c, _, liveGets := ryowSetup(t, time.Second)
		cm := newConfigMap("ns", "cm", nil)
		require.NoError(t, c.Create(ctx, cm))
		assert.Equal(t, 1, client.TrackedWrites(c))
		require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}))
		assert.Equal(t, 0, client.TrackedWrites(c), "forgotten once the cache caught up")
		assert.Zero(t, liveGets.Load())

		// Writes never read again expire after a minute.
		require.NoError(t, c.Create(ctx, newConfigMap("ns", "a", nil)))
		time.Sleep(2 * time.Minute)
		require.NoError(t, c.Create(ctx, newConfigMap("ns", "b", nil)))
		assert.Equal(t, 1, client.TrackedWrites(c))
	})
}

func TestReadYourOwnWritesUnparsableResourceVersionReadsLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		c, cache, liveGets := ryowSetup(t, 0)
		cm := newConfigMap("ns", "cm", map[string]string{"v": "1"})
		require.NoError(t, c.Create(ctx, cm))
		cache.rvOverride = "not-a-number"
		start := time.Now()
		var got corev1.ConfigMap
		require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(cm), &got))
		assert.Equal(t, int32(1), liveGets.Load(), "cannot compare: read live")
		assert.Zero(t, time.Since(start), "without waiting")
	})
}

func TestReadYourOwnWritesContextCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, cache, _ := ryowSetup(t, time.Minute)
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		cm := newConfigMap("ns", "cm", nil)
		require.NoError(t, c.Create(ctx, cm))
		cache.freeze(t, ctx, client.ObjectKeyFromObject(cm), time.Hour)
		cm.Data = map[string]string{"v": "x"}
		require.NoError(t, c.Update(ctx, cm))
		err := c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
		assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	})
}

// countingReader counts the reads that reach it.
type countingReader struct {
	client.Reader
	gets atomic.Int32
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.gets.Add(1)
	return r.Reader.Get(ctx, key, obj, opts...)
}

func TestCachedClientRouting(t *testing.T) {
	server := fake.NewClientBuilder().WithObjects(
		newConfigMap("ns", "cm", nil),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}},
	).Build()
	tests := []struct {
		name         string
		obj          client.Object
		key          client.ObjectKey
		unstructured bool
		wantCached   bool
	}{
		{name: "typed from the cache", obj: &corev1.ConfigMap{}, key: client.ObjectKey{Namespace: "ns", Name: "cm"}, wantCached: true},
		{name: "DisableFor kind from the API server", obj: &corev1.Secret{}, key: client.ObjectKey{Namespace: "ns", Name: "s"}},
		{name: "unstructured from the API server by default", obj: unstructuredConfigMap(), key: client.ObjectKey{Namespace: "ns", Name: "cm"}},
		{name: "unstructured from the cache when asked", obj: unstructuredConfigMap(), key: client.ObjectKey{Namespace: "ns", Name: "cm"}, unstructured: true, wantCached: true},
		{name: "metadata from the cache", obj: metadataConfigMap(), key: client.ObjectKey{Namespace: "ns", Name: "cm"}, wantCached: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := &countingReader{Reader: server}
			c, err := client.NewCachedForTest(server, client.CacheOptions{
				Reader: cache, DisableFor: []client.Object{&corev1.Secret{}}, Unstructured: tt.unstructured,
			})
			require.NoError(t, err)
			require.NoError(t, c.Get(t.Context(), tt.key, tt.obj))
			assert.Equal(t, tt.wantCached, cache.gets.Load() == 1)
		})
	}
}

func unstructuredConfigMap() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return u
}

func metadataConfigMap() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return m
}

func TestNewCacheOptionsErrors(t *testing.T) {
	_, err := client.New(restConfig, client.Options{Cache: &client.CacheOptions{}})
	assert.ErrorContains(t, err, "CacheOptions.Reader is nil")
	_, err = client.New(nil, client.Options{})
	assert.ErrorContains(t, err, "rest.Config is nil")
}

// absentCache answers NotFound to every Get: a cache that never catches up.
type absentCache struct{}

func (absentCache) Get(_ context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: "things"}, key.Name)
}

func (absentCache) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

// TestReadYourOwnWritesOfClusterScopedIgnoresNamespace: a write of a
// cluster-scoped object is remembered without the namespace the caller
// set, so a Get with or without one in its key reads it back.
func TestReadYourOwnWritesOfClusterScopedIgnoresNamespace(t *testing.T) {
	ctx := t.Context()
	server := fake.NewClientBuilder().Build()
	var liveGets atomic.Int32
	live := interceptor.NewClient(server, interceptor.Funcs{
		Get: func(ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			liveGets.Add(1)
			return c.Get(ctx, key, obj, opts...)
		},
	})
	c, err := client.NewCachedForTest(live, client.CacheOptions{Reader: absentCache{}, ReadYourOwnWritesTimeout: 20 * time.Millisecond})
	require.NoError(t, err)

	for _, key := range []client.ObjectKey{{Namespace: "x", Name: "n1"}, {Name: "n2"}} {
		require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: "x"}}))
		for _, read := range []client.ObjectKey{{Namespace: "x", Name: key.Name}, {Name: key.Name}, {Namespace: "y", Name: key.Name}} {
			before := liveGets.Load()
			var got corev1.Namespace
			require.NoError(t, c.Get(ctx, read, &got), "read %v after a write of %v", read, key)
			assert.Equal(t, before+1, liveGets.Load(), "read from the API server once the cache timed out")
		}
	}
	// A Delete leaves the caller's namespace on the object; it is
	// remembered without it too.
	require.NoError(t, c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n1", Namespace: "x"}}))
	before := liveGets.Load()
	assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: "n1"}, &corev1.Namespace{})))
	assert.Equal(t, before, liveGets.Load(), "a remembered delete: the cache's NotFound is right")
}
