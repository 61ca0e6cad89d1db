package builder_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/controller"
)

// testManager is a minimal controller.Manager for these tests: it holds a
// cache, a client reading from it, and the runnables added to it, and runs
// them all in start.
type testManager struct {
	client client.Client
	cache  cache.Cache
	scheme *runtime.Scheme
	mapper meta.RESTMapper
	log    logr.Logger
	reg    *prometheus.Registry

	mu        sync.Mutex
	runnables []interface{ Start(context.Context) error }
	names     map[string]bool
}

var _ controller.Manager = (*testManager)(nil)

func (m *testManager) GetClient() client.Client       { return m.client }
func (m *testManager) GetCache() cache.Cache          { return m.cache }
func (m *testManager) GetScheme() *runtime.Scheme     { return m.scheme }
func (m *testManager) GetRESTMapper() meta.RESTMapper { return m.mapper }
func (m *testManager) GetLogger() logr.Logger         { return m.log }
func (m *testManager) Metrics() prometheus.Registerer { return m.reg }

// Add rejects a second controller with the same name, as the manager does.
func (m *testManager) Add(r interface{ Start(context.Context) error }) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if named, ok := r.(interface{ ControllerName() string }); ok {
		if m.names[named.ControllerName()] {
			return fmt.Errorf("manager: a controller named %q was already added", named.ControllerName())
		}
		m.names[named.ControllerName()] = true
	}
	m.runnables = append(m.runnables, r)
	return nil
}

// newScheme returns a scheme with the built-in types.
func newScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	return s
}

// newOfflineManager returns a manager without a cluster, for tests of
// mistakes the builder reports before touching one.
func newOfflineManager(t *testing.T) *testManager {
	return &testManager{scheme: newScheme(t), log: testLogger(t), reg: prometheus.NewRegistry(), names: map[string]bool{}}
}

// newManager returns a manager whose cache watches only namespace.
func newManager(t *testing.T, cfg *rest.Config, namespace string) *testManager {
	t.Helper()
	scheme := newScheme(t)
	hc, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	require.NoError(t, err)
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, Mapper: mapper, HTTPClient: hc,
		DefaultNamespaces: map[string]cache.Config{namespace: {}}, Logger: testLogger(t)})
	require.NoError(t, err)
	cl, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper, HTTPClient: hc,
		Cache: &client.CacheOptions{Reader: c}})
	require.NoError(t, err)
	t.Cleanup(func() { closeIdle(hc) })
	return &testManager{client: cl, cache: c, scheme: scheme, mapper: mapper, log: testLogger(t),
		reg: prometheus.NewRegistry(), names: map[string]bool{}}
}

func closeIdle(hc *http.Client) { hc.CloseIdleConnections() }

// start runs the cache and every runnable until the returned stop is
// called; stop returns their errors joined. errs receives each runnable's
// error as it returns.
func (m *testManager) start(t *testing.T) (stop func() error, errs <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m.mu.Lock()
	runnables := append([]interface{ Start(context.Context) error }{m.cache}, m.runnables...)
	m.mu.Unlock()
	errc := make(chan error, len(runnables))
	var wg sync.WaitGroup
	for _, r := range runnables {
		wg.Go(func() { errc <- r.Start(ctx) })
	}
	var once sync.Once
	var result error
	stop = func() error {
		once.Do(func() {
			cancel()
			wg.Wait()
			close(errc)
			var all []error
			for err := range errc {
				all = append(all, err)
			}
			result = errors.Join(all...)
		})
		return result
	}
	t.Cleanup(func() { _ = stop() })
	return stop, errc
}

// testLogger logs through t.Log, errors and V(0) only, until the test ends.
func testLogger(t *testing.T) logr.Logger {
	var mu sync.Mutex
	done := false
	t.Cleanup(func() { mu.Lock(); done = true; mu.Unlock() })
	return funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			t.Log(prefix, args)
		}
	}, funcr.Options{})
}
