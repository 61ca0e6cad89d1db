package client_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/controllerutil"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
)

// The read-your-own-writes tracker against the real API server, one state
// transition per case: what the server does with each write (create,
// update, delete with and without finalizers, the update that removes the
// last finalizer, a delete by someone else, a write outside the cache's
// scope) and what a Get through the same client must answer, once with the
// informer lagging behind (a transform that sleeps on every object of the
// test's namespace) and once without.

const finalizer = "kubeloop.dev/test"

// ryowEnv is a cached client over a real cache, a plain client for "someone
// else", and a count of the cached client's own GETs that reached the API
// server (its fallback when the cache does not catch up).
type ryowEnv struct {
	c, other  client.Client
	ns        string
	liveGets  *atomic.Int32
	informers cache.Cache
}

// newRYOWEnv starts a cache and a cached client. lag delays every object
// of the test's namespace in the cache's transform. The cached client
// waits a minute for the cache, so that a needless wait would show as a
// live GET rather than pass after a short timeout.
func newRYOWEnv(t *testing.T, lag time.Duration, opts cache.Options) *ryowEnv {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	other, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := newNamespace(t, ctx, other)
	opts.Logger = logr.FromSlogHandler(slog.DiscardHandler)
	if lag > 0 {
		opts.DefaultTransform = func(obj any) (any, error) {
			if o, ok := obj.(client.Object); ok && o.GetNamespace() == ns {
				time.Sleep(lag)
			}
			return obj, nil
		}
	}
	informers, err := cache.New(restConfig, opts)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- informers.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	_, err = informers.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	require.True(t, informers.WaitForCacheSync(ctx))

	c, liveGets := countingCachedClient(t, informers, time.Minute)
	return &ryowEnv{c: c, other: other, ns: ns, liveGets: liveGets, informers: informers}
}

// countingCachedClient is a cached client over informers, talking to the
// API server directly, with a count of its GETs of ConfigMaps that reached
// the server (its fallback when the cache does not catch up).
func countingCachedClient(t *testing.T, informers *cache.InformerCache, timeout time.Duration) (client.Client, *atomic.Int32) {
	t.Helper()
	var liveGets atomic.Int32
	cfg := rest.CopyConfig(restConfig)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/configmaps/") {
				liveGets.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	c, err := client.New(cfg, client.Options{Cache: &client.CacheOptions{Reader: informers, Progress: informers, Shared: informers, ReadYourOwnWritesTimeout: timeout}})
	require.NoError(t, err)
	return c, &liveGets
}

// lags are the two cache speeds every case runs with.
var lags = []struct {
	name string
	lag  time.Duration
}{{"unforced", 0}, {"lagging cache", 300 * time.Millisecond}}

func TestReadYourOwnWritesDeleteWithFinalizer(t *testing.T) {
	for _, l := range lags {
		t.Run(l.name, func(t *testing.T) {
			env := newRYOWEnv(t, l.lag, cache.Options{})
			ctx := t.Context()
			cm := newConfigMap(env.ns, "fin", map[string]string{"k": "v"})
			cm.Finalizers = []string{finalizer}
			require.NoError(t, env.c.Create(ctx, cm))
			require.NoError(t, env.c.Delete(ctx, cm))

			// The server keeps the object, terminating: the Get must see it so.
			var got corev1.ConfigMap
			require.NoError(t, env.c.Get(ctx, client.ObjectKeyFromObject(cm), &got), "a Delete held by a finalizer does not remove the object")
			assert.NotNil(t, got.DeletionTimestamp, "the object read back is terminating")
			assert.Equal(t, []string{finalizer}, got.Finalizers)

			// Removing the last finalizer deletes it: the Get must not return
			// the terminating object it read before.
			got.Finalizers = nil
			require.NoError(t, env.c.Update(ctx, &got))
			err := env.c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
			assert.True(t, apierrors.IsNotFound(err), "after the last finalizer is removed the object is gone: %v", err)
			assert.Zero(t, env.liveGets.Load(), "the cache caught up; no read went to the API server")
			assert.Zero(t, client.TrackedWrites(env.c), "every write settled")
		})
	}
}

func TestReadYourOwnWritesDeleteWithoutFinalizer(t *testing.T) {
	for _, l := range lags {
		t.Run(l.name, func(t *testing.T) {
			env := newRYOWEnv(t, l.lag, cache.Options{})
			ctx := t.Context()
			cm := newConfigMap(env.ns, "plain", map[string]string{"k": "v"})
			require.NoError(t, env.c.Create(ctx, cm))
			require.NoError(t, env.c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}))
			require.NoError(t, env.c.Delete(ctx, cm))

			// NotFound leaves the caller's object untouched, so that
			// CreateOrUpdate creates it anew.
			got := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: env.ns, Name: "plain"}}
			err := env.c.Get(ctx, client.ObjectKeyFromObject(cm), got)
			require.True(t, apierrors.IsNotFound(err), "a deleted object is not found: %v", err)
			assert.Empty(t, got.ResourceVersion, "a NotFound Get leaves the object as it was")
			assert.Empty(t, got.UID)
			assert.Nil(t, got.Data)

			result, err := controllerutil.CreateOrUpdate(ctx, env.c, got, func() error {
				got.Data = map[string]string{"k": "again"}
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, controllerutil.OperationResultCreated, result)
		})
	}
}

func TestReadYourOwnWritesDeletedByOthers(t *testing.T) {
	for _, l := range lags {
		t.Run(l.name, func(t *testing.T) {
			env := newRYOWEnv(t, l.lag, cache.Options{})
			ctx := t.Context()
			cm := newConfigMap(env.ns, "theirs", map[string]string{"k": "v"})
			require.NoError(t, env.c.Create(ctx, cm))
			cm.Data["k"] = "mine"
			require.NoError(t, env.c.Update(ctx, cm))
			require.Eventually(t, func() bool {
				var seen corev1.ConfigMap
				err := env.informers.Get(ctx, client.ObjectKeyFromObject(cm), &seen)
				return err == nil && seen.ResourceVersion == cm.ResourceVersion
			}, time.Minute, 10*time.Millisecond, "the cache sees the write")
			require.NoError(t, env.other.Delete(ctx, cm))
			require.Eventually(t, func() bool {
				return apierrors.IsNotFound(env.informers.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}))
			}, time.Minute, 10*time.Millisecond, "the cache drops the object")

			// The cache saw the delete after the write: NotFound is the
			// answer, without waiting out the timeout or reading live.
			err := env.c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
			assert.True(t, apierrors.IsNotFound(err), "deleted by another client: %v", err)
			assert.Zero(t, env.liveGets.Load(), "the delete event settled the tracker")
			assert.Zero(t, client.TrackedWrites(env.c))
		})
	}
}

func TestReadYourOwnWritesOutOfScope(t *testing.T) {
	for _, l := range lags {
		t.Run(l.name, func(t *testing.T) {
			in := labels.SelectorFromSet(labels.Set{"scope": "in"})
			env := newRYOWEnv(t, l.lag, cache.Options{DefaultLabelSelector: in})
			ctx := t.Context()

			// Written outside the label selector: the cache never holds it,
			// so a Get answers as for any object outside the cache's scope.
			out := newConfigMap(env.ns, "outside", nil)
			require.NoError(t, env.c.Create(ctx, out))
			err := env.c.Get(ctx, client.ObjectKeyFromObject(out), &corev1.ConfigMap{})
			assert.True(t, apierrors.IsNotFound(err), "an object outside the selector is not in the cache: %v", err)

			// Written inside, then moved out by a write: the cache must not
			// return the version from before the move.
			moved := newConfigMap(env.ns, "moved", nil)
			moved.Labels = map[string]string{"scope": "in"}
			require.NoError(t, env.c.Create(ctx, moved))
			var got corev1.ConfigMap
			require.NoError(t, env.c.Get(ctx, client.ObjectKeyFromObject(moved), &got))
			got.Labels = map[string]string{"scope": "out"}
			require.NoError(t, env.c.Update(ctx, &got))
			err = env.c.Get(ctx, client.ObjectKeyFromObject(moved), &corev1.ConfigMap{})
			assert.True(t, apierrors.IsNotFound(err), "an object moved out of the selector is gone from the cache: %v", err)

			assert.Zero(t, env.liveGets.Load(), "no read waited for the cache and fell back to the API server")
			assert.Zero(t, client.TrackedWrites(env.c))
		})
	}
}

func TestReadYourOwnWritesOutsideNamespaces(t *testing.T) {
	other, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	watched := newNamespace(t, t.Context(), other)
	env := newRYOWEnv(t, 0, cache.Options{DefaultNamespaces: map[string]cache.Config{watched: {}}})
	ctx := t.Context()
	cm := newConfigMap(env.ns, "elsewhere", nil) // env.ns is not watched
	require.NoError(t, env.c.Create(ctx, cm))
	err = env.c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
	assert.ErrorIs(t, err, cache.ErrNamespaceNotCached)
	assert.Zero(t, env.liveGets.Load())
}

func TestReadYourOwnWritesUpdateWhileLagging(t *testing.T) {
	env := newRYOWEnv(t, 300*time.Millisecond, cache.Options{})
	ctx := t.Context()
	cm := newConfigMap(env.ns, "lag", map[string]string{"i": "0"})
	require.NoError(t, env.c.Create(ctx, cm))
	for _, v := range []string{"1", "2", "3"} {
		cm.Data["i"] = v
		require.NoError(t, env.c.Update(ctx, cm))
		var got corev1.ConfigMap
		require.NoError(t, env.c.Get(ctx, client.ObjectKeyFromObject(cm), &got))
		assert.Equal(t, v, got.Data["i"], "the read sees the write just made")
		assert.Equal(t, cm.ResourceVersion, got.ResourceVersion)
	}
	assert.Zero(t, env.liveGets.Load(), "the cache caught up each time")
}

// TestReadYourOwnWritesInformerDown breaks the cache's list-watch (every
// list and watch of ConfigMaps through the fault proxy answers 500): a Get
// after the client's own write must not wait for a cache that cannot catch
// up, but read from the API server at once.
func TestReadYourOwnWritesInformerDown(t *testing.T) {
	proxy, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	defer proxy.Close()
	ctx, cancel := context.WithCancel(t.Context())
	informers, err := cache.New(proxy.Config(), cache.Options{Logger: logr.FromSlogHandler(slog.DiscardHandler)})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- informers.Start(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	_, err = informers.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	require.True(t, informers.WaitForCacheSync(ctx))

	c, liveGets := countingCachedClient(t, informers, time.Hour) // writes and live reads bypass the proxy
	ns := newNamespace(t, ctx, c)

	remove := proxy.AddRule(faultproxy.Rule{Match: faultproxy.PathContains("/configmaps"), Status: http.StatusInternalServerError})
	defer remove()
	proxy.CutWatches()
	require.Eventually(t, func() bool { return informers.Healthy() != nil }, time.Minute, 10*time.Millisecond, "the cache reports the failing list")

	cm := newConfigMap(ns, "down", map[string]string{"k": "v"})
	require.NoError(t, c.Create(ctx, cm))
	getCtx, cancelGet := context.WithTimeout(ctx, 30*time.Second) // far below the hour it would wait
	defer cancelGet()
	var got corev1.ConfigMap
	require.NoError(t, c.Get(getCtx, client.ObjectKeyFromObject(cm), &got), "read through to the API server without waiting")
	assert.Equal(t, cm.ResourceVersion, got.ResourceVersion)
	assert.Equal(t, int32(1), liveGets.Load(), "one read reached the API server")
}
