package multicluster

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// TestConnsAfterLeave: once a cluster left, its connections are closed and
// a new dial fails at once, without dialing, with an error client-go's
// REST client does not retry (not a reset, not an EOF), so a request cut
// short by the leave ends instead of retrying for ten seconds.
func TestConnsAfterLeave(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	cs := newConns()
	c, err := cs.DialContext(t.Context(), "tcp", ln.Addr().String())
	require.NoError(t, err)
	server := <-accepted
	defer server.Close()

	cs.closeAll()
	_, err = c.Read(make([]byte, 1))
	require.Error(t, err, "the open connection is closed")

	_, err = cs.DialContext(t.Context(), "tcp", ln.Addr().String())
	require.ErrorIs(t, err, errLeft)
	assert.False(t, utilnet.IsConnectionReset(err))
	assert.False(t, utilnet.IsProbableEOF(err))
	select {
	case extra := <-accepted:
		extra.Close()
		t.Fatal("dialed after the cluster left")
	default:
	}
}
