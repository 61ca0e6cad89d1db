package faultproxy

import (
	"io"
	"net"
	"time"
)

// RejectMode is what the proxy does with the connections it is given: pass
// them on, or close or reset each at once (see Proxy.Reject).
type RejectMode int

const (
	// Pass serves connections as usual.
	Pass RejectMode = iota
	// CloseConnections accepts each connection and closes it at once: a
	// FIN before any byte is answered (what the client sent is read and
	// dropped, so that the kernel does not answer it with an RST): a load
	// balancer without a backend.
	CloseConnections
	// ResetConnections accepts each connection and resets it at once (an
	// RST: the socket is closed with SO_LINGER 0).
	ResetConnections
)

// Reject makes the proxy treat every new connection as mode says and, for
// CloseConnections and ResetConnections, closes or resets every connection
// open now, the way a load balancer that lost its backend does. Reject(Pass)
// serves new connections again. It returns how many open connections it
// ended.
func (p *Proxy) Reject(mode RejectMode) int { return p.ln.setReject(mode) }

// Rejected returns how many connections the proxy has closed or reset on
// arrival.
func (p *Proxy) Rejected() int {
	p.ln.mu.Lock()
	defer p.ln.mu.Unlock()
	return p.ln.rejected
}

func (l *listener) setReject(mode RejectMode) int {
	l.mu.Lock()
	l.reject = mode
	var open []*conn
	if mode != Pass {
		for c := range l.conns {
			open = append(open, c)
		}
	}
	l.mu.Unlock()
	for _, c := range open {
		end(c.Conn, mode)
		_ = c.Close()
	}
	return len(open)
}

// rejects reports whether c, just accepted, is to be turned away, and if so
// closes or resets it.
func (l *listener) rejects(c net.Conn) bool {
	l.mu.Lock()
	mode := l.reject
	if mode != Pass {
		l.rejected++
	}
	l.mu.Unlock()
	switch mode {
	case Pass:
		return false
	case CloseConnections:
		l.finish(c)
	default:
		end(c, mode)
		_ = c.Close()
	}
	return true
}

// finishLinger bounds how long a connection closed with a FIN is read
// from (and dropped) before it is closed for good.
const finishLinger = time.Second

// finish sends c a FIN at once, then reads and drops what the client sends
// until it closes its side or finishLinger passes, and closes c: closing
// a socket with unread bytes would send an RST instead.
func (l *listener) finish(c net.Conn) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		_ = c.Close()
		return
	}
	_ = tc.CloseWrite()
	_ = tc.SetReadDeadline(time.Now().Add(finishLinger))
	l.finishing.Go(func() {
		_, _ = io.Copy(io.Discard, tc)
		_ = tc.Close()
	})
}

// end prepares c to be closed as mode says: with ResetConnections, the
// close sends an RST instead of a FIN.
func end(c net.Conn, mode RejectMode) {
	if tc, ok := c.(*net.TCPConn); ok && mode == ResetConnections {
		_ = tc.SetLinger(0)
	}
}
