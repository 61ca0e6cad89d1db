package faultproxy

import (
	"net"
	"sync"
)

// listener tracks every accepted connection so that they can be frozen:
// a frozen connection neither reads nor writes, and stays open.
type listener struct {
	net.Listener

	mu    sync.Mutex
	cond  *sync.Cond
	conns map[*conn]struct{}
	hole  bool // blackhole: every connection frozen

	reject    RejectMode     // see reject.go
	rejected  int            // connections turned away on arrival
	finishing sync.WaitGroup // connections being closed with a FIN
}

func newListener(l net.Listener) *listener {
	ln := &listener{Listener: l, conns: map[*conn]struct{}{}}
	ln.cond = sync.NewCond(&ln.mu)
	return ln
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	for err == nil && l.rejects(c) {
		c, err = l.Listener.Accept()
	}
	if err != nil {
		return nil, err
	}
	tc := &conn{Conn: c, ln: l}
	l.mu.Lock()
	l.conns[tc] = struct{}{}
	l.mu.Unlock()
	return tc, nil
}

func (l *listener) freeze() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for c := range l.conns {
		if !c.closed {
			c.frozen = true
			n++
		}
	}
	return n
}

func (l *listener) thaw() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		c.frozen = false
	}
	l.cond.Broadcast()
}

func (l *listener) blackhole(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hole = on
	if !on {
		for c := range l.conns {
			c.frozen = false
		}
		l.cond.Broadcast()
	}
}

func (l *listener) closeAll() {
	l.mu.Lock()
	cs := make([]*conn, 0, len(l.conns))
	for c := range l.conns {
		cs = append(cs, c)
	}
	l.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
	}
}
