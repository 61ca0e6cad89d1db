package manager_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/manager"
)

// TestCacheSizeMetricsAndDebugEndpoint: with N ConfigMaps in the cache
// (typed and, through a second informer, metadata only), /metrics reports
// kubeloop_cache_objects exactly and kubeloop_cache_bytes within a factor
// of 1.5 of the objects' JSON size without managedFields (what the cache
// stores) and of 2 of their JSON as the API server returns them;
// /debug/cache reports the same per namespace, exactly for a namespace of
// at most 16 objects, and follows creates.
func TestCacheSizeMetricsAndDebugEndpoint(t *testing.T) {
	const many, few = 300, 7
	live, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	nsMany, nsFew := unique("cache-size-many"), unique("cache-size-few")
	for _, ns := range []string{nsMany, nsFew} {
		require.NoError(t, live.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	var mu sync.Mutex
	var fullJSON, strippedJSON int64
	create := func(ns string, i int) error {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%04d", i), Labels: map[string]string{"app": "size"}},
			Data:       map[string]string{"payload": strings.Repeat("x", (i*37)%1000)},
		}
		if err := live.Create(context.Background(), cm); err != nil {
			return err
		}
		cm.APIVersion, cm.Kind = "v1", "ConfigMap" // as the cache keeps it
		full, err := json.Marshal(cm)
		if err != nil {
			return err
		}
		cm.ManagedFields = nil
		stripped, err := json.Marshal(cm)
		mu.Lock()
		fullJSON += int64(len(full))
		strippedJSON += int64(len(stripped))
		mu.Unlock()
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < many; i += 4 {
				if err := create(nsMany, i); err != nil {
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
	for i := range few {
		require.NoError(t, create(nsFew, i))
	}

	mgr := newManager(t, restConfig, manager.Options{
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{nsMany: {}, nsFew: {}}},
		Metrics: manager.MetricsOptions{BindAddress: "127.0.0.1:0"},
	})
	ctx := t.Context()
	_, err = mgr.GetCache().GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	_, err = mgr.GetCache().GetInformer(ctx, meta)
	require.NoError(t, err)
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	require.True(t, mgr.GetCache().WaitForCacheSync(ctx))
	base := "http://" + mgr.MetricsAddr().String()

	// /debug/cache: one entry per kind, shape and namespace.
	sizes := debugCache(t, base+manager.CacheDebugPath)
	got := map[string]cache.KindSize{}
	for _, ks := range sizes {
		got[ks.Shape+" "+ks.Namespace] = ks
	}
	require.Len(t, got, 4, "%+v", sizes)
	for _, shape := range []string{"typed", "metadata"} {
		assert.Equal(t, many, got[shape+" "+nsMany].Objects, shape)
		assert.Equal(t, few, got[shape+" "+nsFew].Objects, shape)
		assert.Equal(t, "ConfigMap", got[shape+" "+nsMany].Kind)
		assert.Equal(t, "v1", got[shape+" "+nsMany].Version)
	}
	var cached corev1.ConfigMapList
	require.NoError(t, mgr.GetCache().List(ctx, &cached, client.InNamespace(nsFew)))
	var fewJSON int64
	for i := range cached.Items {
		b, err := json.Marshal(&cached.Items[i])
		require.NoError(t, err)
		fewJSON += int64(len(b))
	}
	assert.Equal(t, fewJSON, got["typed "+nsFew].Bytes, "a namespace of at most 16 objects is measured exactly")
	assert.Less(t, got["metadata "+nsMany].Bytes, got["typed "+nsMany].Bytes, "metadata only holds less")

	// /metrics: per kind and shape, summed over the namespaces.
	objects, bytes := scrapeCache(t, base+"/metrics")
	typed := `group="",kind="ConfigMap",shape="typed",version="v1"`
	assert.Equal(t, float64(many+few), objects[typed])
	assert.Equal(t, float64(many+few), objects[`group="",kind="ConfigMap",shape="metadata",version="v1"`])
	assert.Equal(t, float64(got["typed "+nsMany].Bytes+got["typed "+nsFew].Bytes), bytes[typed], "the metric sums the namespaces")
	t.Logf("kubeloop_cache_bytes %s = %.0f; JSON without managedFields %d (ratio %.3f), as served %d (ratio %.3f)",
		typed, bytes[typed], strippedJSON, bytes[typed]/float64(strippedJSON), fullJSON, bytes[typed]/float64(fullJSON))
	assertFactor(t, float64(strippedJSON), bytes[typed], 1.5)
	assertFactor(t, float64(fullJSON), bytes[typed], 2)

	// Filters, and a create seen by the next read.
	filtered := debugCache(t, base+manager.CacheDebugPath+"?namespace="+nsFew)
	require.Len(t, filtered, 2)
	for _, ks := range filtered {
		assert.Equal(t, nsFew, ks.Namespace)
	}
	require.NoError(t, create(nsFew, few))
	require.Eventually(t, func() bool {
		objects, _ := scrapeCache(t, base+"/metrics")
		return objects[typed] == many+few+1
	}, 30*time.Second, 50*time.Millisecond)
	code, _ := get(t, base+manager.CacheDebugPath+"?kind=Secret")
	assert.Equal(t, http.StatusOK, code)
	assert.Empty(t, debugCache(t, base+manager.CacheDebugPath+"?kind=Secret"))
}

func debugCache(t *testing.T, url string) []cache.KindSize {
	t.Helper()
	code, body := get(t, url)
	require.Equal(t, http.StatusOK, code, body)
	var out []cache.KindSize
	require.NoError(t, json.Unmarshal([]byte(body), &out), body)
	return out
}

// scrapeCache returns the kubeloop_cache_objects and kubeloop_cache_bytes
// samples of a text exposition, keyed by their label set as written.
func scrapeCache(t *testing.T, url string) (objects, bytes map[string]float64) {
	t.Helper()
	code, body := get(t, url)
	require.Equal(t, http.StatusOK, code)
	objects, bytes = map[string]float64{}, map[string]float64{}
	for line := range strings.Lines(body) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), "{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		require.NoError(t, err, line)
		switch name {
		case "kubeloop_cache_objects":
			objects[labels] = v
		case "kubeloop_cache_bytes":
			bytes[labels] = v
		}
	}
	return objects, bytes
}

func assertFactor(t *testing.T, want, got, factor float64) {
	t.Helper()
	assert.GreaterOrEqual(t, got, want/factor, "within a factor of %g of %.0f", factor, want)
	assert.LessOrEqual(t, got, want*factor, "within a factor of %g of %.0f", factor, want)
}
