package manager

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// newRegistry returns the manager's own registry with the Go and process
// collectors.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// restMetrics are client-go's REST client metrics, measured by a
// RoundTripper on the manager's rest.Config instead of client-go's global
// metrics hooks.
type restMetrics struct {
	requests *prometheus.CounterVec   // rest_client_requests_total{code,method,host}
	latency  *prometheus.HistogramVec // rest_client_request_duration_seconds{verb,host}
}

func newRESTMetrics(reg prometheus.Registerer) *restMetrics {
	m := &restMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rest_client_requests_total",
			Help: "Number of HTTP requests to the API server, partitioned by status code, method, and host.",
		}, []string{"code", "method", "host"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rest_client_request_duration_seconds",
			Help:    "Request latency in seconds until the response headers arrived, partitioned by verb and host.",
			Buckets: []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60},
		}, []string{"verb", "host"}),
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// wrap is a transport.WrapperFunc for rest.Config.Wrap.
func (m *restMetrics) wrap(rt http.RoundTripper) http.RoundTripper {
	return &metricsRoundTripper{next: rt, m: m}
}

// metricsRoundTripper counts and times every request.
type metricsRoundTripper struct {
	next http.RoundTripper
	m    *restMetrics
}

var _ utilnet.RoundTripperWrapper = (*metricsRoundTripper)(nil)

// RoundTrip sends req and records its outcome; "<error>" is the code of a
// request that got no response, as in client-go.
func (t *metricsRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	host := req.URL.Host
	t.m.latency.WithLabelValues(req.Method, host).Observe(time.Since(start).Seconds())
	code := "<error>"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	t.m.requests.WithLabelValues(code, req.Method, host).Inc()
	return resp, err
}

// WrappedRoundTripper lets client-go reach the transport underneath (to
// close idle connections, for example).
func (t *metricsRoundTripper) WrappedRoundTripper() http.RoundTripper { return t.next }
