package manager

import (
	"crypto/tls"
	"net"
	"net/http"
	"path/filepath"

	"github.com/kubeloop/kubeloop/certwatcher"
	"github.com/kubeloop/kubeloop/manager/internal/serving"
)

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
		{"pprof", m.opts.PprofBindAddress, plain(serving.Profiles), nil},
	}
	if m.opts.Metrics.SecureServing {
		specs[0].tls = func() (*tls.Config, error) {
			reads, _ := certwatcher.NewMetrics(m.registry) // newRegistry's counters (metrics.go)
			o := m.opts.Metrics
			var certFile, keyFile string
			if o.CertDir != "" {
				certFile, keyFile = filepath.Join(o.CertDir, o.CertName), filepath.Join(o.CertDir, o.KeyName)
			}
			return serving.MetricsTLS(o.TLSOpts, certFile, keyFile, m.logger.WithName("metrics"), reads)
		}
	}
	var servers []*serving.Server
	for _, sp := range specs {
		if !enabled(sp.addr) {
			continue
		}
		h, err := sp.handler()
		var tlsConfig *tls.Config
		if err == nil && sp.tls != nil {
			tlsConfig, err = sp.tls()
		}
		var s *serving.Server
		if err == nil {
			s, err = serving.Listen(sp.name, sp.addr, h, tlsConfig)
		}
		if err != nil {
			for _, s := range servers {
				_ = s.Close()
			}
			return err
		}
		servers = append(servers, s)
	}
	m.mu.Lock()
	m.servers = servers
	m.mu.Unlock()
	for _, s := range servers {
		m.logger.Info("serving", "server", s.Name, "address", s.Addr().String(), "secure", s.Secure)
		go s.Serve(m.fail)
	}
	return nil
}

// serverAddr returns the address the named server listens on, or nil.
func (m *Manager) serverAddr(name string) net.Addr {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.servers {
		if s.Name == name {
			return s.Addr()
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
