package webhook

import (
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeloop/kubeloop/certwatcher"
	imetrics "github.com/kubeloop/kubeloop/internal/metrics"
	"github.com/kubeloop/kubeloop/webhook/internal/serving"
)

// metrics are the Server's collectors, under controller-runtime's names.
type metrics struct {
	requests *prometheus.CounterVec   // controller_runtime_webhook_requests_total{webhook,code}
	latency  *prometheus.HistogramVec // controller_runtime_webhook_latency_seconds{webhook}
	inFlight *prometheus.GaugeVec     // controller_runtime_webhook_requests_in_flight{webhook}
	panics   *prometheus.CounterVec   // controller_runtime_webhook_panics_total{webhook}
	// conversionPanics is controller_runtime_conversion_webhook_panics_total,
	// controller-runtime's series without labels, 0 from the start.
	conversionPanics prometheus.Counter
	// certReads counts the reads of the Server's CertWatcher
	// (certwatcher_read_certificate_total and ..._errors_total).
	certReads *certwatcher.Metrics
}

// newMetrics registers the collectors on reg (nil: unregistered). A
// collector already registered there by another Server is reused.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	var errs []error
	m := &metrics{
		requests: register(reg, &errs, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_webhook_requests_total",
			Help: "Total number of admission and conversion requests by HTTP status code.",
		}, []string{"webhook", "code"})),
		latency: register(reg, &errs, prometheus.NewHistogramVec(imetrics.HistogramOpts(reg, prometheus.HistogramOpts{
			Name:    "controller_runtime_webhook_latency_seconds",
			Help:    "Histogram of the latency of processing webhook requests.",
			Buckets: prometheus.DefBuckets,
		}), []string{"webhook"})),
		inFlight: register(reg, &errs, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "controller_runtime_webhook_requests_in_flight",
			Help: "Current number of webhook requests being served.",
		}, []string{"webhook"})),
		panics: register(reg, &errs, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_webhook_panics_total",
			Help: "Total number of webhook handler panics.",
		}, []string{"webhook"})),
	}
	m.conversionPanics = register(reg, &errs, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_conversion_webhook_panics_total",
		Help: "Total number of conversion webhook panics",
	}, []string{})).WithLabelValues()
	reads, err := certwatcher.NewMetrics(reg)
	if err != nil {
		errs = append(errs, fmt.Errorf("webhook: %w", err))
	}
	m.certReads = reads
	return m, errors.Join(errs...)
}

func register[C prometheus.Collector](reg prometheus.Registerer, errs *[]error, c C) C {
	if reg == nil {
		return c
	}
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	*errs = append(*errs, fmt.Errorf("webhook: register metrics: %w", err))
	return c
}

// instrument wraps the handler of path (s.mu is held): it limits the body, counts and
// times the request, puts the path's logger and a panic recorder into the
// request's context, and turns a panic that escapes h into a 500.
func (s *Server) instrument(path string, h http.Handler) http.Handler {
	log := s.opts.Logger.WithValues("webhook", path)
	inFlight := s.metrics.inFlight.WithLabelValues(path)
	latency := s.metrics.latency.WithLabelValues(path)
	panics := s.metrics.panics.WithLabelValues(path)
	recorder := &serving.Recorder{Panic: func(any) { panics.Inc() }, ConversionPanic: func(any) { s.metrics.conversionPanics.Inc() }}
	requests := s.metrics.requests
	limit := s.opts.MaxRequestBytes
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		inFlight.Inc()
		rw := &statusWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v != nil && v != http.ErrAbortHandler {
				panics.Inc()
				log.Error(fmt.Errorf("panic: %v", v), "webhook: handler panicked", "stack", string(debug.Stack()))
				if !rw.wroteHeader {
					http.Error(rw, "webhook: internal error", http.StatusInternalServerError)
				}
			}
			inFlight.Dec()
			latency.Observe(time.Since(start).Seconds())
			requests.WithLabelValues(path, strconv.Itoa(rw.code())).Inc()
			if v == http.ErrAbortHandler {
				panic(v)
			}
		}()
		ctx := logr.NewContext(r.Context(), log)
		ctx = serving.WithRecorder(ctx, recorder)
		r = r.WithContext(ctx)
		r.Body = http.MaxBytesReader(rw, r.Body, limit)
		h.ServeHTTP(rw, r)
	})
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = http.StatusOK, true
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) code() int {
	if !w.wroteHeader {
		return http.StatusOK
	}
	return w.status
}
