package restmetrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/kubeloop/kubeloop/manager/internal/restmetrics"
)

// series returns the families of reg by name, each series by its labels
// ("k=v,k=v" in label order).
func series(t *testing.T, reg *prometheus.Registry) map[string]map[string]*dto.Metric {
	fams, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]map[string]*dto.Metric{}
	for _, f := range fams {
		out[f.GetName()] = map[string]*dto.Metric{}
		for _, m := range f.GetMetric() {
			key := ""
			for i, l := range m.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += l.GetName() + "=" + l.GetValue()
			}
			out[f.GetName()][key] = m
		}
	}
	return out
}

func get(t *testing.T, cfg *rest.Config, path string) {
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	_ = cs.Discovery().RESTClient().Get().AbsPath(path).Do(context.Background()).Error()
}

func TestRequestsLatencyAndLimiterWaits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/broken" {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("{}"))
	}))
	defer srv.Close()
	host := srv.Listener.Addr().String()
	reg := prometheus.NewRegistry()
	cfg := &rest.Config{Host: srv.URL, RateLimiter: flowcontrol.NewTokenBucketRateLimiter(1000, 1000)}
	restmetrics.Instrument(cfg, reg)

	get(t, cfg, "/ok")
	get(t, cfg, "/ok")
	get(t, cfg, "/broken") // client-go does not retry a 500 without Retry-After

	s := series(t, reg)
	assert.Equal(t, 2.0, s["rest_client_requests_total"]["code=200,host="+host+",method=GET"].GetCounter().GetValue())
	assert.Equal(t, 1.0, s["rest_client_requests_total"]["code=500,host="+host+",method=GET"].GetCounter().GetValue())
	assert.Equal(t, uint64(3), s["rest_client_request_duration_seconds"]["host="+host+",verb=GET"].GetHistogram().GetSampleCount())
	assert.Equal(t, uint64(3), s["rest_client_rate_limiter_duration_seconds"]["host="+host].GetHistogram().GetSampleCount(),
		"one wait for the limiter per request")
}

func TestNoResponseIsCountedAsError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	srv.Close() // nothing listens any more
	reg := prometheus.NewRegistry()
	cfg := &rest.Config{Host: srv.URL} // QPS only: no limiter to wrap
	restmetrics.Instrument(cfg, reg)
	assert.Nil(t, cfg.RateLimiter)

	get(t, cfg, "/gone")
	s := series(t, reg)
	assert.Positive(t, s["rest_client_requests_total"]["code=<error>,host="+u.Host+",method=GET"].GetCounter().GetValue())
	assert.Empty(t, s["rest_client_rate_limiter_duration_seconds"], "no limiter, no waits")
}
