package faultproxy

import "net"

type conn struct {
	net.Conn
	ln     *listener
	frozen bool // guarded by ln.mu
	closed bool // guarded by ln.mu
}

func (c *conn) Read(b []byte) (int, error) {
	c.ln.wait(c)
	n, err := c.Conn.Read(b)
	c.ln.wait(c) // bytes that arrived while frozen are held back
	return n, err
}

func (c *conn) Write(b []byte) (int, error) {
	c.ln.wait(c)
	return c.Conn.Write(b)
}

func (c *conn) Close() error {
	c.ln.mu.Lock()
	c.closed = true
	delete(c.ln.conns, c)
	c.ln.cond.Broadcast()
	c.ln.mu.Unlock()
	return c.Conn.Close()
}

// wait blocks while c is frozen.
func (l *listener) wait(c *conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for (c.frozen || l.hole) && !c.closed {
		l.cond.Wait()
	}
}
