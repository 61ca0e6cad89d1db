package cache_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
)

// requestLog records the query of every ConfigMap request in one
// namespace.
type requestLog struct {
	mu      sync.Mutex
	ns      string
	queries []string
	next    http.RoundTripper
}

func (l *requestLog) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.Contains(req.URL.Path, "/namespaces/"+l.ns+"/configmaps") {
		l.mu.Lock()
		l.queries = append(l.queries, req.URL.RawQuery)
		l.mu.Unlock()
	}
	return l.next.RoundTrip(req)
}

func (l *requestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.queries...)
}

func (l *requestLog) saw(substr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range l.queries {
		if strings.Contains(q, substr) {
			return true
		}
	}
	return false
}

// TestInitialListModes loads the same objects with a LIST and with a
// streaming list, checks which request each mode made, that managedFields
// are gone either way, and that later changes arrive.
func TestInitialListModes(t *testing.T) {
	for _, mode := range []cache.InitialList{cache.InitialListPaged, cache.InitialListStreaming} {
		t.Run(mode.String(), func(t *testing.T) {
			ns := newNamespace(t)
			createConfigMaps(t, ns, "cm", 120, func(i int, cm *corev1.ConfigMap) { cm.Data = map[string]string{"i": fmt.Sprint(i)} })
			log := &requestLog{ns: ns}
			c2 := rest.CopyConfig(cfg)
			c2.Wrap(func(rt http.RoundTripper) http.RoundTripper { log.next = rt; return log })
			httpClient, err := rest.HTTPClientFor(c2)
			require.NoError(t, err)
			c := startCache(t, c2, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, HTTPClient: httpClient, InitialList: mode})
			ctx := ctxTimeout(t, time.Minute)

			var list corev1.ConfigMapList
			require.NoError(t, c.List(ctx, &list))
			require.Len(t, list.Items, 120)
			for _, cm := range list.Items {
				require.Empty(t, cm.ManagedFields, "%s stripped", cm.Name)
				require.Equal(t, cm.Name[len("cm-"):], cm.Data["i"])
			}
			streamed := log.saw("sendInitialEvents=true")
			assert.Equal(t, mode == cache.InitialListStreaming, streamed, "streaming list requested: %v", streamed)
			if mode == cache.InitialListPaged {
				assert.True(t, log.saw("resourceVersion=0"), "a LIST from the watch cache: %v", log.all())
			}

			_, err = kube.CoreV1().ConfigMaps(ns).Update(context.Background(), &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "cm-7", Namespace: ns}, Data: map[string]string{"i": "changed"},
			}, metav1.UpdateOptions{})
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				var cm corev1.ConfigMap
				return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm-7"}, &cm) == nil && cm.Data["i"] == "changed" && len(cm.ManagedFields) == 0
			}, time.Minute, 10*time.Millisecond)
		})
	}
	_, err := cache.New(cfg, cache.Options{InitialList: 7})
	assert.ErrorContains(t, err, "InitialList InitialList(7) is not a mode")
}

// TestSyncPeriodResync checks that a SyncPeriod replays every cached
// object to the handlers as an update from itself, against the real API
// server: the feed's Resync, driven by client-go's reflector.
func TestSyncPeriodResync(t *testing.T) {
	ns := newNamespace(t)
	createConfigMaps(t, ns, "cm", 3, nil)
	period := 200 * time.Millisecond
	c := startCache(t, cfg, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, SyncPeriod: &period})
	ctx := ctxTimeout(t, time.Minute)
	inf, err := c.GetInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)

	var mu sync.Mutex
	resyncs := map[string]int{}
	var problems []string
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(*corev1.ConfigMap), newObj.(*corev1.ConfigMap)
			mu.Lock()
			defer mu.Unlock()
			if o != n || o.ResourceVersion != n.ResourceVersion {
				problems = append(problems, fmt.Sprintf("%s: update %s -> %s without a change", n.Name, o.ResourceVersion, n.ResourceVersion))
			}
			resyncs[n.Name]++
		},
	})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(resyncs) == 3 && resyncs["cm-0"] >= 2 && resyncs["cm-1"] >= 2 && resyncs["cm-2"] >= 2
	}, time.Minute, 20*time.Millisecond, "every object resynced at least twice")
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, problems)
}
