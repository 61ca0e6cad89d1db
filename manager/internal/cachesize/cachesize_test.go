package cachesize_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/manager/internal/cachesize"
)

// sizes is a Sizer with fixed answers, counting the reads.
type sizes struct {
	list  []cache.KindSize
	reads int
}

func (s *sizes) Sizes() []cache.KindSize { s.reads++; return s.list }

func fixture() *sizes {
	return &sizes{list: []cache.KindSize{
		{Group: "", Version: "v1", Kind: "ConfigMap", Shape: "typed", Namespace: "a", Objects: 2, Bytes: 200},
		{Group: "", Version: "v1", Kind: "ConfigMap", Shape: "typed", Namespace: "b", Objects: 3, Bytes: 300},
		{Group: "", Version: "v1", Kind: "ConfigMap", Shape: "metadata", Namespace: "a", Objects: 1, Bytes: 10},
		{Group: "", Version: "v1", Kind: "Node", Shape: "typed", Namespace: "", Objects: 4, Bytes: 4000},
	}}
}

func TestCollectorSumsOverNamespaces(t *testing.T) {
	s := fixture()
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(cachesize.Collector(s)))
	assert.Zero(t, s.reads, "nothing read before a scrape")
	fams, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" || l.GetName() == "shape" {
					key += " " + l.GetValue()
				}
			}
			got[key] = m.GetGauge().GetValue()
		}
	}
	assert.Equal(t, map[string]float64{
		"kubeloop_cache_objects ConfigMap typed":    5,
		"kubeloop_cache_objects ConfigMap metadata": 1,
		"kubeloop_cache_objects Node typed":         4,
		"kubeloop_cache_bytes ConfigMap typed":      500,
		"kubeloop_cache_bytes ConfigMap metadata":   10,
		"kubeloop_cache_bytes Node typed":           4000,
	}, got, "one series per kind and shape, summed over namespaces")
	_, err = reg.Gather()
	require.NoError(t, err)
	assert.Equal(t, 2, s.reads, "read at each scrape")
}

func TestHandler(t *testing.T) {
	tests := []struct {
		name      string
		sizer     cachesize.Sizer
		method    string
		query     string
		wantCode  int
		wantNames []string // namespace/kind/shape of the entries
	}{
		{"all", fixture(), http.MethodGet, "", http.StatusOK, []string{"a/ConfigMap/typed", "b/ConfigMap/typed", "a/ConfigMap/metadata", "/Node/typed"}},
		{"one namespace", fixture(), http.MethodGet, "?namespace=a", http.StatusOK, []string{"a/ConfigMap/typed", "a/ConfigMap/metadata"}},
		{"cluster-scoped", fixture(), http.MethodGet, "?namespace=", http.StatusOK, []string{"/Node/typed"}},
		{"one kind", fixture(), http.MethodGet, "?kind=Node", http.StatusOK, []string{"/Node/typed"}},
		{"none match", fixture(), http.MethodGet, "?kind=Secret", http.StatusOK, []string{}},
		{"post", fixture(), http.MethodPost, "", http.StatusMethodNotAllowed, nil},
		{"no sizer", nil, http.MethodGet, "", http.StatusNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			cachesize.Handler(tt.sizer).ServeHTTP(rec, httptest.NewRequest(tt.method, "/debug/cache"+tt.query, nil))
			require.Equal(t, tt.wantCode, rec.Code, rec.Body.String())
			if tt.wantCode == http.StatusMethodNotAllowed {
				assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
			}
			if tt.wantNames == nil {
				return
			}
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			var got []cache.KindSize
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
			names := []string{}
			for _, ks := range got {
				names = append(names, ks.Namespace+"/"+ks.Kind+"/"+ks.Shape)
			}
			assert.Equal(t, tt.wantNames, names)
		})
	}
}
