package faultproxy_test

import (
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/internal/faultproxy"
)

func TestRejectClosesOrResetsConnections(t *testing.T) {
	p, err := faultproxy.New(upstream(t))
	require.NoError(t, err)
	defer p.Close()
	hc := client(t, p)
	url := p.Config().Host + "/api"
	get := func() error {
		resp, err := hc.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && string(body) != "ok" {
			t.Fatalf("unexpected body %q", body)
		}
		return err
	}
	require.NoError(t, get(), "a connection is open before the fault")

	// getNew returns the error of the first request that dials a new
	// connection; one may first meet the connection Reject just ended.
	getNew := func() error {
		before := p.Rejected()
		var err error
		for range 3 {
			if err = get(); p.Rejected() > before {
				return err
			}
		}
		t.Fatalf("no new connection was dialed: %v", err)
		return nil
	}

	assert.Equal(t, 1, p.Reject(faultproxy.CloseConnections), "the open connection is ended")
	err = getNew()
	require.Error(t, err)
	assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF), "accepted, then closed: the TLS handshake reads EOF: %v", err)

	p.Reject(faultproxy.ResetConnections)
	err = getNew()
	require.Error(t, err)
	assert.True(t, errorsIsReset(err), "accepted, then reset: %v", err)

	p.Reject(faultproxy.Pass)
	require.NoError(t, get(), "new connections are served again")
}

func errorsIsReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || strings.Contains(err.Error(), "connection reset by peer")
}
