package cache

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubeloop/kubeloop/client"
)

// TestLaunch checks that Launch returns at once with the informers
// running, refuses a second start, and closes its channel only after ctx
// ended and every informer, including one added after the launch, has
// stopped (goleak in TestMain checks that none is left).
func TestLaunch(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(cmGVK, meta.RESTScopeNamespace)
	src := &fakeSources{}
	t.Cleanup(func() {
		for _, s := range src.sources {
			s.Shutdown()
		}
	})
	c, err := newCache(Options{Mapper: mapper, Logger: logr.FromSlogHandler(slog.DiscardHandler)}, src, nil)
	require.NoError(t, err)
	src.source(cmGVK).Add(configMap("ns", "one", 1))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopped, err := c.Launch(ctx)
	require.NoError(t, err)
	var cm corev1.ConfigMap
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "one"}, &cm), "an informer added after the launch runs")
	require.True(t, c.WaitForCacheSync(ctx))
	select {
	case <-stopped:
		t.Fatal("the channel closed before ctx ended")
	default:
	}
	_, err = c.Launch(ctx)
	assert.Error(t, err, "a second Launch")
	assert.Error(t, c.Start(ctx), "a Start after Launch")

	cancel()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second): // a hang guard, not a bound
		t.Fatal("the informers did not stop after ctx ended")
	}
}
