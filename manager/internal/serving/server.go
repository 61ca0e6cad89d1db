package serving

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server is one of the manager's HTTP servers (metrics, probes, pprof):
// Listen opens it, Serve serves until Shutdown.
type Server struct {
	Name     string // in logs and errors: "metrics", "health probe", "pprof"
	Secure   bool   // serves TLS
	srv      *http.Server
	listener net.Listener
	done     chan struct{}
}

// Listen opens addr for a server named name serving handler, over TLS
// when tlsConfig is set. Errors read "manager: <name> server: listen on
// <addr>: ...".
func Listen(name, addr string, handler http.Handler, tlsConfig *tls.Config) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("manager: %s server: listen on %s: %w", name, addr, err)
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	return &Server{
		Name: name,
		srv: &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: 32 * time.Second,
			MaxHeaderBytes:    1 << 20,
		},
		listener: ln,
		Secure:   tlsConfig != nil,
		done:     make(chan struct{}),
	}, nil
}

// Addr is the address s listens on (the port chosen for ":0").
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// Close closes the listener of a server that never served.
func (s *Server) Close() error { return s.listener.Close() }

// Serve serves until Shutdown; an unexpected end is reported to fail.
func (s *Server) Serve(fail func(error)) {
	defer close(s.done)
	if err := s.srv.Serve(s.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fail(fmt.Errorf("manager: %s server: %w", s.Name, err))
	}
}

// Shutdown stops accepting, waits for in-flight requests until ctx ends,
// then closes whatever is left, and returns once Serve returned. Serve
// must have been called.
func (s *Server) Shutdown(ctx context.Context) {
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.done
}
