package cachesize

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeloop/kubeloop/cache"
)

// Sizer is what the collector and the handler need of a cache;
// *cache.InformerCache (what cache.New returns) has it.
type Sizer interface {
	Sizes() []cache.KindSize
}

// collector reports a cache's sizes when the registry is gathered.
type collector struct {
	sizer   Sizer
	objects *prometheus.Desc
	bytes   *prometheus.Desc
}

var _ prometheus.Collector = (*collector)(nil)

// Collector returns the collector of kubeloop_cache_objects and
// kubeloop_cache_bytes for s; see the package doc.
func Collector(s Sizer) prometheus.Collector {
	labels := []string{"group", "version", "kind", "shape"}
	return &collector{
		sizer: s,
		objects: prometheus.NewDesc("kubeloop_cache_objects",
			"Number of objects the manager's cache holds, per kind and shape (typed, unstructured, metadata).", labels, nil),
		bytes: prometheus.NewDesc("kubeloop_cache_bytes",
			"Approximate size in bytes of the objects the manager's cache holds, as JSON without managedFields, "+
				"estimated from a sample; not the Go heap they occupy.", labels, nil),
	}
}

// Describe sends the two descriptors.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.objects
	ch <- c.bytes
}

// Collect reads the cache and sends one gauge of each metric per kind and
// shape.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
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

// Handler answers a GET or HEAD with s's sizes as a JSON array of
// cache.KindSize, filtered by ?namespace= and ?kind=; other methods get
// 405, and a nil s 404.
func Handler(s Sizer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if s == nil {
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
