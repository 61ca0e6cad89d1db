package manager

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeloop/kubeloop/cache"
)

// CacheDebugPath is where the metrics server serves the cache's sizes as
// JSON (see Manager.CacheDebugHandler), unless Metrics.ExtraHandlers has a
// handler of its own for the path.
const CacheDebugPath = "/debug/cache"

// cacheSizer is what the cache metrics and the debug endpoint need of a
// cache; *cache.InformerCache (what cache.New returns) has it.
type cacheSizer interface {
	Sizes() []cache.KindSize
}

// cacheCollector reports the manager's cache sizes when the registry is
// gathered: kubeloop_cache_objects and kubeloop_cache_bytes per kind and
// shape, summed over namespaces (one series per namespace would grow with
// the cluster; CacheDebugPath has them).
type cacheCollector struct {
	sizer   cacheSizer
	objects *prometheus.Desc
	bytes   *prometheus.Desc
}

var _ prometheus.Collector = (*cacheCollector)(nil)

func newCacheCollector(s cacheSizer) *cacheCollector {
	labels := []string{"group", "version", "kind", "shape"}
	return &cacheCollector{
		sizer: s,
		objects: prometheus.NewDesc("kubeloop_cache_objects",
			"Number of objects the manager's cache holds, per kind and shape (typed, unstructured, metadata).", labels, nil),
		bytes: prometheus.NewDesc("kubeloop_cache_bytes",
			"Approximate size in bytes of the objects the manager's cache holds, as JSON without managedFields, "+
				"estimated from a sample; not the Go heap they occupy.", labels, nil),
	}
}

// Describe sends the two descriptors.
func (c *cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.objects
	ch <- c.bytes
}

// Collect reads the cache and sends one gauge of each metric per kind and
// shape.
func (c *cacheCollector) Collect(ch chan<- prometheus.Metric) {
	type key struct{ group, version, kind, shape string }
	type total struct {
		objects int
		bytes   int64
	}
	var order []key
	totals := map[key]*total{}
	for _, s := range c.sizer.Sizes() {
		k := key{s.Group, s.Version, s.Kind, s.Shape}
		t := totals[k]
		if t == nil {
			t = &total{}
			totals[k] = t
			order = append(order, k)
		}
		t.objects += s.Objects
		t.bytes += s.Bytes
	}
	for _, k := range order {
		t := totals[k]
		ch <- prometheus.MustNewConstMetric(c.objects, prometheus.GaugeValue, float64(t.objects), k.group, k.version, k.kind, k.shape)
		ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, float64(t.bytes), k.group, k.version, k.kind, k.shape)
	}
}

// registerCacheMetrics registers the cache collector on the manager's
// registry when the cache can report its sizes.
func (m *Manager) registerCacheMetrics() error {
	s, ok := m.cache.(cacheSizer)
	if !ok {
		return nil
	}
	return m.registry.Register(newCacheCollector(s))
}

// CacheDebugHandler returns the handler the metrics server serves at
// CacheDebugPath, to mount elsewhere too: a GET answers a JSON array of
// cache.KindSize (group, version, kind, shape, namespace, objects, bytes),
// one per kind, shape and namespace, sorted; ?namespace= and ?kind= keep
// only the entries that match. It answers 404 when the manager's cache
// cannot report its sizes (a cache.Cache other than cache.New's).
func (m *Manager) CacheDebugHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		s, ok := m.cache.(cacheSizer)
		if !ok {
			http.Error(w, "the manager's cache does not report its sizes", http.StatusNotFound)
			return
		}
		q := r.URL.Query()
		out := []cache.KindSize{}
		for _, ks := range s.Sizes() {
			if ns, ok := q["namespace"]; ok && ks.Namespace != ns[0] {
				continue
			}
			if kind := q.Get("kind"); kind != "" && ks.Kind != kind {
				continue
			}
			out = append(out, ks)
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
	})
}

// addCacheDebug serves CacheDebugPath on mux unless an extra handler
// already has the path.
func (m *Manager) addCacheDebug(mux *http.ServeMux) {
	if _, ok := m.opts.Metrics.ExtraHandlers[CacheDebugPath]; !ok {
		mux.Handle(CacheDebugPath, m.CacheDebugHandler())
	}
}
