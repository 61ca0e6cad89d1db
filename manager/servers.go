package manager

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kubeloop/kubeloop/certwatcher"
)

// server is one of the manager's HTTP servers (metrics, probes, pprof).
type server struct {
	name     string
	srv      *http.Server
	listener net.Listener
	secure   bool // serves TLS
	done     chan struct{}
}

// listen opens addr for a server named name serving handler, over TLS
// when tlsConfig is set.
func listen(name, addr string, handler http.Handler, tlsConfig *tls.Config) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("manager: %s server: listen on %s: %w", name, addr, err)
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	return &server{
		name: name,
		srv: &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: 32 * time.Second,
			MaxHeaderBytes:    1 << 20,
		},
		listener: ln,
		secure:   tlsConfig != nil,
		done:     make(chan struct{}),
	}, nil
}

// serve serves until shutdown; an unexpected end is reported to fail.
func (s *server) serve(fail func(error)) {
	defer close(s.done)
	if err := s.srv.Serve(s.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fail(fmt.Errorf("manager: %s server: %w", s.name, err))
	}
}

// shutdown stops accepting, waits for in-flight requests until ctx ends,
// then closes whatever is left.
func (s *server) shutdown(ctx context.Context) {
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.done
}

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

// startServers opens and starts every enabled HTTP server. On error it
// closes those already opened.
func (m *Manager) startServers() error {
	type spec struct {
		name, addr string
		handler    func() (http.Handler, error)
		tls        func() (*tls.Config, error) // nil: plain HTTP
	}
	plain := func(h func() http.Handler) func() (http.Handler, error) {
		return func() (http.Handler, error) { return h(), nil }
	}
	specs := []spec{
		{"metrics", m.opts.Metrics.BindAddress, m.filteredMetricsHandler, nil},
		{"health probe", m.opts.HealthProbeBindAddress, plain(m.probeHandler), nil},
		{"pprof", m.opts.PprofBindAddress, plain(pprofHandler), nil},
	}
	if m.opts.Metrics.SecureServing {
		specs[0].tls = func() (*tls.Config, error) {
			reads, _ := certwatcher.NewMetrics(m.registry) // newRegistry's counters (metrics.go)
			return m.opts.Metrics.metricsTLSConfig(m.logger.WithName("metrics"), reads)
		}
	}
	var servers []*server
	for _, sp := range specs {
		if !enabled(sp.addr) {
			continue
		}
		h, err := sp.handler()
		var tlsConfig *tls.Config
		if err == nil && sp.tls != nil {
			tlsConfig, err = sp.tls()
		}
		var s *server
		if err == nil {
			s, err = listen(sp.name, sp.addr, h, tlsConfig)
		}
		if err != nil {
			for _, s := range servers {
				_ = s.listener.Close()
			}
			return err
		}
		servers = append(servers, s)
	}
	m.mu.Lock()
	m.servers = servers
	m.mu.Unlock()
	for _, s := range servers {
		m.logger.Info("serving", "server", s.name, "address", s.listener.Addr().String(), "secure", s.secure)
		go s.serve(m.fail)
	}
	return nil
}

// serverAddr returns the address the named server listens on, or nil.
func (m *Manager) serverAddr(name string) net.Addr {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.servers {
		if s.name == name {
			return s.listener.Addr()
		}
	}
	return nil
}

// MetricsAddr returns the address the metrics server listens on once
// Start has opened it (useful with a ":0" BindAddress), else nil.
func (m *Manager) MetricsAddr() net.Addr { return m.serverAddr("metrics") }

// HealthProbeAddr returns the address the probe server listens on once
// Start has opened it, else nil.
func (m *Manager) HealthProbeAddr() net.Addr { return m.serverAddr("health probe") }

// PprofAddr returns the address the pprof server listens on once Start
// has opened it, else nil.
func (m *Manager) PprofAddr() net.Addr { return m.serverAddr("pprof") }
