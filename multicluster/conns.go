package multicluster

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// conns dials a cluster's connections and closes them all when the
// cluster leaves: a request that hangs (a blackholed cluster's discovery,
// say) ends with its connection instead of outliving the cluster.
type conns struct {
	dialer net.Dialer
	mu     sync.Mutex
	open   map[*conn]struct{}
	closed bool
}

func newConns() *conns {
	return &conns{dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}, open: map[*conn]struct{}{}}
}

// errLeft is what a dial for a cluster that left returns. It is not a
// connection reset nor an EOF, which client-go's REST client retries ten
// times a second apart: a discovery request cut short by the leave
// (closeAll) is retried once and then ends, instead of outliving the
// cluster by ten seconds.
var errLeft = errors.New("multicluster: the cluster left the fleet")

// DialContext dials addr and tracks the connection.
func (cs *conns) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	cs.mu.Lock()
	closed := cs.closed
	cs.mu.Unlock()
	if closed {
		return nil, errLeft
	}
	nc, err := cs.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := &conn{Conn: nc, cs: cs}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		_ = nc.Close()
		return nil, errLeft
	}
	cs.open[c] = struct{}{}
	return c, nil
}

// closeAll closes every connection and refuses new ones.
func (cs *conns) closeAll() {
	cs.mu.Lock()
	cs.closed = true
	open := cs.open
	cs.open = map[*conn]struct{}{}
	cs.mu.Unlock()
	for c := range open {
		_ = c.Conn.Close()
	}
}

// conn is a tracked connection; Close forgets it.
type conn struct {
	net.Conn
	cs   *conns
	once sync.Once
}

// Close closes the connection and forgets it.
func (c *conn) Close() error {
	c.once.Do(func() {
		c.cs.mu.Lock()
		delete(c.cs.open, c)
		c.cs.mu.Unlock()
	})
	return c.Conn.Close()
}
