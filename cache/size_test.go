package cache

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/client"
)

// sizedConfigMap is a ConfigMap whose data grows with i.
func sizedConfigMap(ns string, i int) *corev1.ConfigMap {
	cm := configMap(ns, fmt.Sprintf("cm-%04d", i), i)
	cm.Data["payload"] = strings.Repeat("x", (i*37)%400)
	return cm
}

// cachedJSON returns the summed JSON size of the cached ConfigMaps of ns,
// as a read returns them.
func cachedJSON(t *testing.T, c *InformerCache, ns string) (n int, bytes int64) {
	t.Helper()
	var list corev1.ConfigMapList
	require.NoError(t, c.List(context.Background(), &list, client.InNamespace(ns)))
	for i := range list.Items {
		b, err := json.Marshal(&list.Items[i])
		require.NoError(t, err)
		bytes += int64(len(b))
	}
	return len(list.Items), bytes
}

func sizeOf(sizes []KindSize, kind, ns string) (KindSize, bool) {
	for _, s := range sizes {
		if s.Kind == kind && s.Namespace == ns {
			return s, true
		}
	}
	return KindSize{}, false
}

func TestSizesCountsExactlyAndEstimatesBytes(t *testing.T) {
	c, src := newFakeCache(t, Options{})
	s := src.source(cmGVK)
	const few, many = 5, 600
	for i := range few {
		s.Add(sizedConfigMap("few", i))
	}
	for i := range many {
		s.Add(sizedConfigMap("many", i))
	}
	ctx := context.Background()
	_, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	_, err = c.GetInformer(ctx, &corev1.Secret{}) // holds nothing
	require.NoError(t, err)
	require.True(t, c.WaitForCacheSync(ctx))
	require.Eventually(t, func() bool { n, _ := cachedJSON(t, c, "many"); return n == many }, waitFor, tick)

	sizes := c.Sizes()
	require.Len(t, sizes, 3, "%+v", sizes)

	got, ok := sizeOf(sizes, "ConfigMap", "few")
	require.True(t, ok)
	n, want := cachedJSON(t, c, "few")
	assert.Equal(t, KindSize{Version: "v1", Kind: "ConfigMap", Shape: "typed", Namespace: "few", Objects: n, Bytes: want}, got,
		"a namespace of at most 16 objects is measured exactly")

	got, ok = sizeOf(sizes, "ConfigMap", "many")
	require.True(t, ok)
	n, want = cachedJSON(t, c, "many")
	assert.Equal(t, many, got.Objects)
	assert.Equal(t, n, got.Objects)
	assertWithinFactor(t, want, got.Bytes, 1.5)

	got, ok = sizeOf(sizes, "Secret", "")
	require.True(t, ok, "an informer that holds nothing is listed")
	assert.Equal(t, KindSize{Version: "v1", Kind: "Secret", Shape: "typed"}, got)

	// Deletes are counted as they happen.
	s.Delete(sizedConfigMap("few", 0))
	require.Eventually(t, func() bool { g, _ := sizeOf(c.Sizes(), "ConfigMap", "few"); return g.Objects == few-1 }, waitFor, tick)
}

// TestSizesBudgetSpreadsOverNamespaces: past the per-informer sample
// budget, namespaces get the informer's mean size; the total stays close.
func TestSizesBudgetSpreadsOverNamespaces(t *testing.T) {
	c, src := newFakeCache(t, Options{})
	s := src.source(cmGVK)
	const namespaces, per = 100, 20 // 2,000 objects, more than the budget of 1,024
	for ns := range namespaces {
		for i := range per {
			s.Add(sizedConfigMap(fmt.Sprintf("ns-%03d", ns), ns*per+i))
		}
	}
	ctx := context.Background()
	_, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	require.True(t, c.WaitForCacheSync(ctx))
	var all corev1.ConfigMapList
	require.Eventually(t, func() bool {
		require.NoError(t, c.List(ctx, &all))
		return len(all.Items) == namespaces*per
	}, waitFor, tick)
	var want int64
	for i := range all.Items {
		b, err := json.Marshal(&all.Items[i])
		require.NoError(t, err)
		want += int64(len(b))
	}

	sizes := c.Sizes()
	require.Len(t, sizes, namespaces)
	var total int64
	for _, ks := range sizes {
		assert.Equal(t, per, ks.Objects, ks.Namespace)
		assert.Positive(t, ks.Bytes, ks.Namespace)
		total += ks.Bytes
	}
	assertWithinFactor(t, want, total, 1.5)
}

// TestSizesWhileTheStoreChanges runs Sizes beside a writer (for -race).
func TestSizesWhileTheStoreChanges(t *testing.T) {
	c, src := newFakeCache(t, Options{})
	s := src.source(cmGVK)
	_, err := c.GetInformer(context.Background(), &corev1.ConfigMap{})
	require.NoError(t, err)
	require.True(t, c.WaitForCacheSync(context.Background()))
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 300 {
			s.Add(sizedConfigMap("ns", i))
			if i%3 == 0 {
				s.Delete(sizedConfigMap("ns", i/2))
			}
		}
	})
	for range 50 {
		for _, ks := range c.Sizes() {
			assert.GreaterOrEqual(t, ks.Objects, 0)
			assert.GreaterOrEqual(t, ks.Bytes, int64(0))
		}
	}
	wg.Wait()
}

func assertWithinFactor(t *testing.T, want, got int64, factor float64) {
	t.Helper()
	t.Logf("bytes: estimated %d, actual %d (ratio %.3f)", got, want, float64(got)/float64(want))
	assert.GreaterOrEqual(t, float64(got), float64(want)/factor)
	assert.LessOrEqual(t, float64(got), float64(want)*factor)
}
