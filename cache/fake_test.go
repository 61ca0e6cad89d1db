package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fcache "k8s.io/client-go/tools/cache/testing"

	"github.com/kubeloop/kubeloop/cache/internal/listwatch"
	"github.com/kubeloop/kubeloop/client"
)

// fakeSources serves every kind, shape and namespace from one
// FakeControllerSource per kind (namespaces and selectors are not
// filtered: the unit tests use one namespace).
type fakeSources struct {
	mu      sync.Mutex
	sources map[schema.GroupVersionKind]*fakeSource
}

// fakeSource is a FakeControllerSource whose list error can be set while
// a reflector uses it, and that does not speak streaming lists.
type fakeSource struct {
	*fcache.FakeControllerSource
	listErr atomic.Pointer[error]
}

func (f *fakeSource) List(opts metav1.ListOptions) (runtime.Object, error) {
	if p := f.listErr.Load(); p != nil {
		return nil, *p
	}
	return f.FakeControllerSource.List(opts)
}

func (f *fakeSource) IsWatchListSemanticsUnSupported() bool { return true }

func (f *fakeSources) source(gvk schema.GroupVersionKind) *fakeSource {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sources == nil {
		f.sources = map[schema.GroupVersionKind]*fakeSource{}
	}
	s, ok := f.sources[gvk]
	if !ok {
		s = &fakeSource{FakeControllerSource: fcache.NewFakeControllerSource()}
		f.sources[gvk] = s
	}
	return s
}

func (f *fakeSources) ListWatch(r listwatch.Request) (listwatch.Source, error) {
	return listwatch.Source{ListWatch: f.source(r.GVK)}, nil
}

var cmGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

func newFakeCache(t testing.TB, opts Options) (*InformerCache, *fakeSources) {
	t.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(cmGVK, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, meta.RESTScopeNamespace)
	opts.Mapper = mapper
	opts.Logger = logr.FromSlogHandler(slog.DiscardHandler)
	src := &fakeSources{}
	c, err := newCache(opts, src, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		src.mu.Lock()
		defer src.mu.Unlock()
		for _, s := range src.sources {
			s.Shutdown()
		}
	})
	require.True(t, c.WaitForCacheSync(ctx))
	return c, src
}

func configMap(ns, name string, i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "bench", "tier": fmt.Sprint(i % 4)},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "test", Operation: metav1.ManagedFieldsOperationUpdate}}},
		Data: map[string]string{"key": fmt.Sprint("value-", i), "owner": fmt.Sprint("o", i%10)},
	}
}

func TestHealthRecordsAndClearsListErrors(t *testing.T) {
	c, src := newFakeCache(t, Options{})
	s := src.source(cmGVK)
	var forbidden error = apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("RBAC says no"))
	s.listErr.Store(&forbidden)
	ctx := context.Background()
	_, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)

	require.Eventually(t, func() bool { return c.Healthy() != nil }, waitFor, tick)
	herr := c.Healthy()
	assert.ErrorContains(t, herr, "v1, Kind=ConfigMap")
	assert.True(t, apierrors.IsForbidden(errors.Unwrap(herr.(interface{ Unwrap() []error }).Unwrap()[0])))

	s.listErr.Store(nil) // the next (backed-off) list succeeds
	require.True(t, c.WaitForCacheSync(ctx))
	assert.NoError(t, c.Healthy())
}

func TestTransformInternsAndStrips(t *testing.T) {
	c, src := newFakeCache(t, Options{})
	s := src.source(cmGVK)
	for i := range 3 {
		s.Add(configMap("ns", fmt.Sprint("cm-", i), i))
	}
	ctx := context.Background()
	var list corev1.ConfigMapList
	require.NoError(t, c.List(ctx, &list, client.UnsafeDisableDeepCopy))
	require.Len(t, list.Items, 3)
	a, b := list.Items[0], list.Items[1]
	assert.Empty(t, a.ManagedFields)
	assert.Equal(t, "ConfigMap", a.Kind)
	assert.Same(t, unsafeStringData(a.Namespace), unsafeStringData(b.Namespace), "namespace shared")
	assert.Same(t, unsafeStringData(a.Labels["app"]), unsafeStringData(b.Labels["app"]), "label value shared")
}

func TestListLimitAndContinue(t *testing.T) {
	c, src := newFakeCache(t, Options{})
	s := src.source(cmGVK)
	for i := range 5 {
		s.Add(configMap("ns", fmt.Sprint("cm-", i), i))
	}
	ctx := context.Background()
	var list corev1.ConfigMapList
	require.NoError(t, c.List(ctx, &list, client.Limit(2)))
	assert.Len(t, list.Items, 2)
	assert.Error(t, c.List(ctx, &list, client.Continue("x")))
	err := c.List(ctx, &list, client.HasLabels{"bad key!"})
	assert.Error(t, err, "an invalid label selector is an error")
}

// blockingMapper answers RESTMapping only when released, as a discovery
// request to a slow API server would.
type blockingMapper struct {
	meta.RESTMapper
	release chan struct{}
}

func (m blockingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	<-m.release
	return m.RESTMapper.RESTMapping(gk, versions...)
}

// TestInformerCreationHonoursContext checks that GetInformer and a read
// return when their context ends while the kind is being mapped (discovery
// takes no context), and that a later call gets the informer.
func TestInformerCreationHonoursContext(t *testing.T) {
	inner := meta.NewDefaultRESTMapper(nil)
	inner.Add(cmGVK, meta.RESTScopeNamespace)
	m := blockingMapper{RESTMapper: inner, release: make(chan struct{})}
	src := &fakeSources{}
	c, err := newCache(Options{Mapper: m, Logger: logr.FromSlogHandler(slog.DiscardHandler)}, src, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Start(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
		src.source(cmGVK).Shutdown()
	}()

	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	_, err = c.GetInformer(short, &corev1.ConfigMap{})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	var cm corev1.ConfigMap
	err = c.Get(short, client.ObjectKey{Namespace: "ns", Name: "a"}, &cm)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "a lazy read gives up too")

	close(m.release)
	_, err = c.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	assert.True(t, c.WaitForCacheSync(ctx))
}
