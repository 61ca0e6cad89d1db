package cache_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
)

// TestMutationDetector writes into objects the cache shares, against a
// real API server: a label into an object from GetShared, found by the
// periodic check; data into an object from a no-copy List, found when its
// update replaces it. Each is reported once, naming the kind, the object
// and the field. An untouched cache reports nothing.
func TestMutationDetector(t *testing.T) {
	ns := newNamespace(t)
	createConfigMaps(t, ns, "cm", 3, func(_ int, cm *corev1.ConfigMap) {
		cm.Labels = map[string]string{"app": "demo"}
		cm.Data = map[string]string{"k": "v"}
	})
	var mu sync.Mutex
	var found []error
	report := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		found = append(found, err)
	}
	reported := func() []error {
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), found...)
	}
	c := startCache(t, cfg, cache.Options{DetectMutations: true, OnMutation: report})
	ctx := ctxTimeout(t, time.Minute)

	// Reads that copy, and shared reads left alone, are no mutation.
	var copied corev1.ConfigMap
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm-0"}, &copied))
	copied.Labels["app"] = "mine"
	_, err := client.GetShared[*corev1.ConfigMap](ctx, c, client.ObjectKey{Namespace: ns, Name: "cm-2"})
	require.NoError(t, err)
	time.Sleep(1500 * time.Millisecond) // more than one check period
	assert.Empty(t, reported(), "nothing written into the cache's objects")

	shared, err := client.GetShared[*corev1.ConfigMap](ctx, c, client.ObjectKey{Namespace: ns, Name: "cm-0"})
	require.NoError(t, err)
	shared.Labels["app"] = "written"
	require.Eventually(t, func() bool { return len(reported()) == 1 }, time.Minute, 20*time.Millisecond)
	assert.Contains(t, reported()[0].Error(), "ConfigMap "+ns+`/cm-0 was changed while the cache held it (metadata.labels.app: "demo" -> "written")`)

	var list corev1.ConfigMapList
	require.NoError(t, c.List(ctx, &list, client.InNamespace(ns), client.UnsafeDisableDeepCopy))
	var cm1 *corev1.ConfigMap
	for i := range list.Items {
		if list.Items[i].Name == "cm-1" {
			cm1 = &list.Items[i]
		}
	}
	require.NotNil(t, cm1)
	cm1.Data["k"] = "written too" // the item shares Data with the cached object

	live, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	update := &corev1.ConfigMap{}
	require.NoError(t, live.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm-1"}, update))
	update.Data = map[string]string{"k": "new"}
	require.NoError(t, live.Update(ctx, update))
	require.Eventually(t, func() bool { return len(reported()) == 2 }, time.Minute, 20*time.Millisecond)
	assert.Contains(t, reported()[1].Error(), "ConfigMap "+ns+`/cm-1 was changed while the cache held it (data.k: "v" -> "written too")`)

	time.Sleep(1500 * time.Millisecond)
	assert.Len(t, reported(), 2, "each mutation is reported once")
}
