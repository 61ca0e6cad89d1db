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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/cache/internal/listwatch"
)

// TestPipelineParts builds the pipelines of a cache over a real
// list-watch factory (nothing is sent: no informer runs) and checks the
// parts each is given: the cache's one prober, a health of its own, the
// kind's description, example, transform and resync, and the watch
// decoder's store view exactly where the decoder may share maps (a typed
// kind without a user transform).
func TestPipelineParts(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(cmGVK, meta.RESTScopeNamespace)
	resync := time.Hour
	c, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, Options{
		Mapper: mapper,
		Logger: logr.FromSlogHandler(slog.DiscardHandler),
		DefaultNamespaces: map[string]Config{
			"plain":       {SyncPeriod: &resync},
			"transformed": {Transform: func(obj any) (any, error) { return obj, nil }},
		},
	})
	require.NoError(t, err)
	require.NotNil(t, c.pipes.prober, "the factory's prober")
	mapping, err := listwatch.RESTMapping(context.Background(), mapper, cmGVK)
	require.NoError(t, err)

	for _, tc := range []struct {
		name      string
		give      shape
		wantType  any
		wantViews map[string]bool // namespace -> has a store view
	}{
		{"typed", shapeTyped, &corev1.ConfigMap{}, map[string]bool{"plain": true, "transformed": false}},
		{"unstructured", shapeUnstructured, &unstructured.Unstructured{}, map[string]bool{"plain": false, "transformed": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := kindKey{shape: tc.give, gvk: cmGVK}
			kc := configFor(c.opts, c.byGVK, cmGVK)
			example, err := listwatch.Example(cmGVK, tc.give, c.opts.Scheme)
			require.NoError(t, err)
			views := map[string]bool{}
			for _, nc := range kc.informers(true) {
				p, err := c.pipes.pipeline(key, mapping, kc, nc, example, c.log)
				require.NoError(t, err)
				views[nc.namespace] = p.StoreView != nil
				assert.Equal(t, "v1, Kind=ConfigMap", p.Description)
				assert.IsType(t, tc.wantType, p.Example)
				assert.NotNil(t, p.ListWatch)
				assert.NotNil(t, p.Health)
				assert.Same(t, c.pipes.prober, p.Prober, "one prober per cache")
				assert.NotNil(t, p.Transform, "the cache's transform, around the user's")
				assert.False(t, p.StreamingList)
				if nc.namespace == "plain" {
					assert.Equal(t, resync, p.Resync)
				}
			}
			assert.Equal(t, tc.wantViews, views)
		})
	}

	// Each informer gets a health of its own.
	kc := configFor(c.opts, c.byGVK, cmGVK)
	e, err := newEntry(kindKey{shape: shapeTyped, gvk: cmGVK}, mapping, kc, &c.pipes, c.log)
	require.NoError(t, err)
	all := e.group.All()
	require.Len(t, all, 2)
	assert.NotSame(t, all[0].Health, all[1].Health)
}
