package cache_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

// One control plane for the package, with RBAC so that a test can run the
// cache as a user with few permissions.
var (
	env     *envtest.Environment
	cfg     *rest.Config
	kube    kubernetes.Interface
	dyn     dynamic.Interface
	nsCount atomic.Int64
)

var widgetGVR = schema.GroupVersionResource{Group: "test.kubeloop.io", Version: "v1", Resource: "widgets"}

func TestMain(m *testing.M) {
	env = &envtest.Environment{Authorization: "RBAC", CRDDirectoryPaths: []string{"testdata/crds"}}
	testenv.Main(m, testenv.Options{
		Env: env,
		Setup: func(c *rest.Config) error {
			cfg = c
			kube = kubernetes.NewForConfigOrDie(cfg)
			dyn = dynamic.NewForConfigOrDie(cfg)
			return nil
		},
	})
}

// newNamespace creates a namespace with a unique name.
func newNamespace(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%d", time.Now().UnixNano()%1e6, nsCount.Add(1))
	_, err := kube.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return name
}

// startCache builds a cache over c, starts it and stops it at the end of
// the test, checking that Start returns.
func startCache(t testing.TB, c *rest.Config, opts cache.Options) *cache.InformerCache {
	t.Helper()
	ca, err := cache.New(c, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var startErr error
	wg.Go(func() { startErr = ca.Start(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		require.NoError(t, startErr)
	})
	require.True(t, ca.WaitForCacheSync(ctxTimeout(t, time.Minute)))
	return ca
}

// createConfigMaps creates n ConfigMaps named prefix-i in ns, with labels
// and data from mk, using a few writers in parallel.
func createConfigMaps(t testing.TB, ns, prefix string, n int, mk func(i int, cm *corev1.ConfigMap)) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	const writers = 8
	for w := range writers {
		wg.Go(func() {
			for i := w; i < n; i += writers {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i), Namespace: ns}}
				if mk != nil {
					mk(i, cm)
				}
				if _, err := kube.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
