package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
)

// Server is an HTTPS server for admission and conversion webhooks. It is a
// manager runnable that needs no leadership: every replica serves, since the
// API server calls any of them.
type Server struct {
	certs *CertWatcher
	// ownMetrics and ownLogger record that NewServer's Options set Metrics
	// and Logger; UseDefaults keeps them then.
	ownMetrics, ownLogger bool
	// disabled is Options.Port < 0 (DisabledPort).
	disabled bool

	mu         sync.RWMutex
	opts       Options
	metrics    *metrics
	metricsErr error
	handlers   map[string]route
	started    bool
	addr       net.Addr // while serving
}

// route is a registered handler, as given and as served (instrumented).
type route struct {
	given, served http.Handler
}

// NewServer returns a Server configured by opts. It does not listen until
// Start.
func NewServer(opts Options) *Server {
	own := opts
	opts = opts.withDefaults()
	m, err := newMetrics(opts.Metrics)
	s := &Server{
		opts:       opts,
		ownMetrics: own.Metrics != nil,
		ownLogger:  own.Logger.GetSink() != nil,
		disabled:   opts.Port < 0,
		metrics:    m,
		metricsErr: err,
		certs: NewCertWatcher(filepath.Join(opts.CertDir, opts.CertName),
			filepath.Join(opts.CertDir, opts.KeyName), opts.Logger),
		handlers: map[string]route{},
	}
	s.certs.WithMetrics(m.certReads)
	return s
}

// UseDefaults gives the Server a metrics registerer and a logger for the
// Options NewServer was given zero: a manager calls it with its own
// registry and logger for the Server in manager.Options.WebhookServer, so
// that a Server built by the user (the kubebuilder scaffold's pattern)
// exports its controller_runtime_webhook_* series and logs where the
// manager's do. Options.Metrics and Options.Logger set explicitly are
// kept; a nil metrics or a zero log changes nothing. Handlers registered
// before are served with the new ones. It fails once Start was called.
func (s *Server) UseDefaults(metrics prometheus.Registerer, log logr.Logger) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("webhook: UseDefaults after Start")
	}
	changed := false
	if !s.ownMetrics && metrics != nil {
		s.opts.Metrics = metrics
		s.metrics, s.metricsErr = newMetrics(metrics)
		s.certs.WithMetrics(s.metrics.certReads)
		changed = true
	}
	if !s.ownLogger && log.GetSink() != nil {
		s.opts.Logger = log
		s.certs.setLogger(log)
		changed = true
	}
	if changed {
		for path, r := range s.handlers {
			s.handlers[path] = route{given: r.given, served: s.instrument(path, r.given)}
		}
	}
	return nil
}

// Register serves h at exactly path (no prefix matching), before or after
// Start. It panics when path does not start with "/", h is nil or path is
// already registered, as http.ServeMux.Handle does: those are programming
// errors. ManagedBy's builder returns them as errors instead.
func (s *Server) Register(path string, h http.Handler) {
	if err := s.register(path, h); err != nil {
		panic(err)
	}
}

func (s *Server) register(path string, h http.Handler) error {
	if !strings.HasPrefix(path, "/") {
		return fmt.Errorf("webhook: path %q does not start with /", path)
	}
	if h == nil {
		return fmt.Errorf("webhook: nil handler for path %s", path)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.handlers[path]; dup {
		return fmt.Errorf("webhook: path %s is already registered", path)
	}
	s.handlers[path] = route{given: h, served: s.instrument(path, h)}
	if s.disabled {
		s.opts.Logger.V(1).Info("webhook registered on a disabled server; it will not be served", "path", path)
	} else {
		s.opts.Logger.V(1).Info("webhook registered", "path", path)
	}
	return nil
}

// registered reports whether path has a handler.
func (s *Server) registered(path string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.handlers[path]
	return ok
}

// ServeHTTP dispatches to the handler registered at the request's path,
// or answers 404.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.RLock()
	h, ok := s.handlers[r.URL.Path]
	s.mu.RUnlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	h.served.ServeHTTP(w, r)
}

// NeedLeaderElection returns false: webhooks are served on every replica.
func (s *Server) NeedLeaderElection() bool { return false }

// Addr returns the address the Server listens on while it serves, such as
// "127.0.0.1:40123", and "" before Start has bound it and after Start
// returns.
func (s *Server) Addr() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.addr == nil {
		return ""
	}
	return s.addr.String()
}

// Options returns the Server's options, defaults applied (controller-
// runtime's DefaultServer.Options field): a copy, so changing it changes
// nothing.
func (s *Server) Options() Options {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.opts
}

// Disabled reports whether Options.Port was negative (DisabledPort): the
// Server then serves nothing.
func (s *Server) Disabled() bool { return s.disabled }

// Start loads the certificate, listens and serves until ctx ends, then
// shuts down gracefully (Options.ShutdownTimeout) and returns after every
// connection is closed. The certificate is the one TLSOpts set
// (GetCertificate or Certificates), else the pair in Options.CertDir. It
// returns an error when the certificate cannot be loaded, the address
// cannot be bound, the metrics cannot be registered, or serving fails; a
// Server starts at most once. A Disabled Server only waits for ctx to end.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errors.New("webhook: server already started")
	}
	s.started = true
	metricsErr, log := s.metricsErr, s.opts.Logger
	s.mu.Unlock()
	if s.Disabled() {
		log.Info("webhook server is disabled (Port is negative); serving nothing")
		<-ctx.Done()
		return nil
	}
	if metricsErr != nil {
		return metricsErr
	}
	tlsConfig, certSource, err := s.tlsConfig()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(s.opts.Host, strconv.Itoa(s.listenPort())))
	if err != nil {
		return fmt.Errorf("webhook: listen: %w", err)
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(s.opts.EnableHTTP2)
	srv := &http.Server{
		Handler:   s,
		TLSConfig: tlsConfig,
		Protocols: &protocols,
		// Slowloris protection, as controller-runtime's servers have.
		ReadHeaderTimeout: 32 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          stdlog.New(logWriter{log.V(1)}, "", 0),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	s.mu.Lock()
	s.addr = ln.Addr()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.addr = nil
		s.mu.Unlock()
	}()
	log.Info("serving webhooks", "addr", ln.Addr().String(), "certificate", certSource)

	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-served:
		return fmt.Errorf("webhook: serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Error(err, "webhook: graceful shutdown did not finish; closing connections")
		_ = srv.Close()
	}
	<-served
	log.Info("stopped serving webhooks")
	return nil
}

// tlsConfig returns the TLS configuration: TLS 1.2 at least, then TLSOpts,
// then, unless they set a certificate, CertDir's pair (loaded now, so that
// a missing pair fails Start). It also says where the certificate comes
// from, for the log.
func (s *Server) tlsConfig() (*tls.Config, string, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	for _, opt := range s.opts.TLSOpts {
		opt(cfg)
	}
	if cfg.GetCertificate != nil || len(cfg.Certificates) > 0 {
		return cfg, "TLSOpts", nil
	}
	if err := s.certs.Load(); err != nil {
		return nil, "", err
	}
	cfg.GetCertificate = s.certs.GetCertificate
	return cfg, s.opts.CertDir, nil
}

// listenPort is the port given to net.Listen: 0 (any) for AnyPort.
func (s *Server) listenPort() int {
	if s.opts.Port == AnyPort {
		return 0
	}
	return s.opts.Port
}

// StartedChecker returns a readiness check (manager/healthz's Checker
// signature) that passes while the Server serves TLS: it dials the bound
// address and completes a handshake. For a Disabled Server it always
// passes, as controller-runtime's does.
func (s *Server) StartedChecker() func(*http.Request) error {
	return func(r *http.Request) error {
		if s.Disabled() {
			return nil
		}
		addr := s.Addr()
		if addr == "" {
			return errors.New("webhook: server is not serving")
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return fmt.Errorf("webhook: address %s: %w", addr, err)
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			host = "127.0.0.1"
			if ip.To4() == nil {
				host = "::1"
			}
		}
		ctx := context.Background()
		if r != nil {
			ctx = r.Context()
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		// Only whether TLS is served is checked, not who signed the
		// certificate: the checker has no CA to trust.
		d := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
		if err != nil {
			return fmt.Errorf("webhook: TLS dial %s: %w", addr, err)
		}
		return conn.Close()
	}
}

// logWriter sends the http.Server's own messages (TLS handshake errors,
// mostly) to a logger.
type logWriter struct{ log logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Info("http server: " + strings.TrimSpace(string(p)))
	return len(p), nil
}
