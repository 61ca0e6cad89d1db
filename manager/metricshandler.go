package manager

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsHandler serves the manager's registry and metrics.Registry at
// /metrics (gatherer, metrics.go) plus the extra handlers.
func (m *Manager) metricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.gatherer(), promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		ErrorLog:      promLogger{m},
	}))
	for p, h := range m.opts.Metrics.ExtraHandlers {
		mux.Handle(p, h)
	}
	m.addCacheDebug(mux) // cachemetrics.go
	return mux
}

// probeHandler serves the liveness and readiness checks.
func (m *Manager) probeHandler() http.Handler {
	mux := http.NewServeMux()
	for p, h := range map[string]http.Handler{m.opts.LivenessEndpointName: &m.healthz, m.opts.ReadinessEndpointName: &m.readyz} {
		mux.Handle(p, http.StripPrefix(p, h))
		mux.Handle(p+"/", http.StripPrefix(p, h))
	}
	return mux
}

// promLogger sends promhttp's errors to the manager's logger.
type promLogger struct{ m *Manager }

func (l promLogger) Println(v ...any) {
	l.m.logger.Error(errors.New(fmt.Sprint(v...)), "serve /metrics")
}
