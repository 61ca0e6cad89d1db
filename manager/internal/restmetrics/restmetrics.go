package restmetrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	imetrics "github.com/kubeloop/kubeloop/internal/metrics"
)

// restMetrics are client-go's REST client metrics, measured on the
// manager's rest.Config instead of through client-go's global metrics
// hooks: requests and their latency by a RoundTripper, client-side
// rate-limiter waits by a wrapper of the config's RateLimiter.
type restMetrics struct {
	requests *prometheus.CounterVec   // rest_client_requests_total{code,method,host}
	latency  *prometheus.HistogramVec // rest_client_request_duration_seconds{verb,host}
	limiter  *prometheus.HistogramVec // rest_client_rate_limiter_duration_seconds{host}
}

// restDurationBuckets are the buckets of client-go's (and
// controller-runtime's) REST client duration histograms.
var restDurationBuckets = []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}

// Instrument registers the rest_client_* metrics on reg and makes cfg
// measure its requests and its RateLimiter's waits into them; see the
// package doc. It panics if reg already holds them.
func Instrument(cfg *rest.Config, reg prometheus.Registerer) {
	newRESTMetrics(reg).instrument(cfg)
}

func newRESTMetrics(reg prometheus.Registerer) *restMetrics {
	m := &restMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rest_client_requests_total",
			Help: "Number of HTTP requests to the API server, partitioned by status code, method, and host.",
		}, []string{"code", "method", "host"}),
		latency: prometheus.NewHistogramVec(imetrics.HistogramOpts(reg, prometheus.HistogramOpts{
			Name:    "rest_client_request_duration_seconds",
			Help:    "Request latency in seconds until the response headers arrived, partitioned by verb and host.",
			Buckets: restDurationBuckets,
		}), []string{"verb", "host"}),
		limiter: prometheus.NewHistogramVec(imetrics.HistogramOpts(reg, prometheus.HistogramOpts{
			Name:    "rest_client_rate_limiter_duration_seconds",
			Help:    "Client side rate limiter latency in seconds. Broken down by host.",
			Buckets: restDurationBuckets,
		}), []string{"host"}),
	}
	reg.MustRegister(m.requests, m.latency, m.limiter)
	return m
}

// instrument makes cfg measure its requests (rest.Config.Wrap) and, when
// it carries a client-side RateLimiter, the waits for it: every client
// built from cfg (the manager's client, cache, API reader, events and
// GetConfig's copies) shares that limiter, as before, and each wait for
// it is observed in rest_client_rate_limiter_duration_seconds{host}. A
// config that sets only QPS gets no such wrapper: client-go builds a
// limiter for each REST client then, which no wrapper of the config can
// reach (give a RateLimiter, flowcontrol.NewTokenBucketRateLimiter(qps,
// burst), to have the waits measured).
func (m *restMetrics) instrument(cfg *rest.Config) {
	cfg.Wrap(m.wrap)
	if cfg.RateLimiter == nil {
		return
	}
	host := cfg.Host
	if u, _, err := rest.DefaultServerUrlFor(cfg); err == nil {
		host = u.Host
	}
	cfg.RateLimiter = &timedLimiter{RateLimiter: cfg.RateLimiter, waits: m.limiter.WithLabelValues(host)}
}

// timedLimiter observes how long each Wait for the limiter it wraps took.
// client-go's REST client calls Wait before each request (and each retry)
// and nothing else.
type timedLimiter struct {
	flowcontrol.RateLimiter
	waits prometheus.Observer
}

var _ flowcontrol.RateLimiter = (*timedLimiter)(nil)

// Wait waits for the wrapped limiter and observes the wait, also one that
// ended with ctx.
func (l *timedLimiter) Wait(ctx context.Context) error {
	start := time.Now()
	err := l.RateLimiter.Wait(ctx)
	l.waits.Observe(time.Since(start).Seconds())
	return err
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
