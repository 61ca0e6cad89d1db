package reliability_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// TestShutdownDuringCachedGetLogsNoError stops the manager while a
// reconcile waits in a cached Get (the first read of a kind, whose informer
// cannot list because the API server does not answer): the reconcile ends
// with the shutdown, and nothing is logged at ERROR, since nothing failed.
func TestShutdownDuringCachedGetLogsNoError(t *testing.T) {
	proxy, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	defer proxy.Close()
	ns := newNamespace(t)

	var mu sync.Mutex
	var errorLines []string
	logger := funcr.New(func(prefix, args string) {
		if strings.Contains(args, `"error"`) || strings.Contains(args, `"err"`) {
			mu.Lock()
			errorLines = append(errorLines, prefix+" "+args)
			mu.Unlock()
		}
	}, funcr.Options{Verbosity: 0})

	mgr, err := manager.New(proxy.Config(), manager.Options{
		Logger: logger,
		Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	require.NoError(t, err)
	inGet := make(chan struct{})
	var once sync.Once
	var getErr error
	err = builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(
		reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			once.Do(func() {
				proxy.Blackhole(true)
				close(inGet)
			})
			// Secrets are not watched: this Get starts their informer and
			// waits for its first list, which hangs in the blackhole.
			getErr = mgr.GetClient().Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: "s"}, &corev1.Secret{})
			return reconcile.Result{}, getErr
		}))
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trigger"}}
	_, err = admin.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
	require.NoError(t, err)
	select {
	case <-inGet:
	case <-time.After(time.Minute):
		t.Fatal("the reconcile never started")
	}
	time.Sleep(200 * time.Millisecond) // let the Get reach the list
	cancel()
	require.NoError(t, <-done)
	proxy.Blackhole(false)

	require.Error(t, getErr, "the Get ended with the shutdown")
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, errorLines, "nothing is logged at ERROR for a read cut short by the shutdown:\n%s", fmt.Sprint(strings.Join(errorLines, "\n")))
}
