package reliability_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/webhook"
)

// readHeaderTimeout is what the manager's and the webhook server's
// http.Server use (manager/servers.go, webhook/server.go).
const readHeaderTimeout = 32 * time.Second

// target is one of the servers under attack.
type target struct {
	name string
	addr string
	tls  *tls.Config // nil: plain HTTP
}

func (tg target) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", tg.addr, 5*time.Second)
	require.NoError(t, err)
	if tg.tls == nil {
		return c
	}
	tc := tls.Client(c, tg.tls)
	require.NoError(t, tc.Handshake())
	return tc
}

// slowloris sends a request's headers one byte a second, never finishing
// them, and returns how long the server took to cut the connection.
func slowloris(t *testing.T, tg target) time.Duration {
	c := tg.dial(t)
	defer c.Close()
	begin := time.Now()
	cut := make(chan struct{})
	go func() {
		defer close(cut)
		_, _ = io.Copy(io.Discard, c) // returns when the server closes
	}()
	head := "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "
	if _, err := io.WriteString(c, head); err != nil {
		return time.Since(begin)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-cut:
			return time.Since(begin)
		case <-tick.C:
			if _, err := io.WriteString(c, "a"); err != nil {
				<-cut
				return time.Since(begin)
			}
			if time.Since(begin) > readHeaderTimeout+30*time.Second { // hang bound
				t.Errorf("%s: a slowloris connection lived %s", tg.name, time.Since(begin))
				return time.Since(begin)
			}
		}
	}
}

// bigHeaders sends 1 MiB and 64 KiB of headers at once and returns the
// status answered.
func bigHeaders(t *testing.T, tg target) (int, time.Duration) {
	c := tg.dial(t)
	defer c.Close()
	begin := time.Now()
	require.NoError(t, c.SetDeadline(time.Now().Add(readHeaderTimeout+30*time.Second))) // hang bound
	go func() {
		_, _ = fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", 1<<20+64<<10))
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, time.Since(begin)
	}
	resp.Body.Close()
	return resp.StatusCode, time.Since(begin)
}

// servingCertDir writes a self-signed serving certificate for 127.0.0.1
// into a directory as tls.crt and tls.key, and returns it with a pool
// trusting it.
func servingCertDir(t *testing.T) (string, *x509.CertPool) {
	t.Helper()
	certPEM, pair := selfSignedCA(t, "webhook")
	keyDER, err := x509.MarshalPKCS8PrivateKey(pair.PrivateKey)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(certPEM))
	return dir, pool
}

// TestServersCutSlowAndOversizedHeaders attacks the manager's metrics and
// probe servers and the webhook server with slowloris connections and with
// oversized headers: each slow connection is cut within ReadHeaderTimeout
// plus a second, and oversized headers get 431.
func TestServersCutSlowAndOversizedHeaders(t *testing.T) {
	dir, pool := servingCertDir(t)
	wh := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: dir, Logger: quiet()})
	wh.Register("/validate", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	mgr := newManager(t, restConfig, "default", manager.Options{
		HealthProbeBindAddress: "127.0.0.1:0",
		Metrics:                manager.MetricsOptions{BindAddress: "127.0.0.1:0"},
		WebhookServer:          wh,
	})
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	r.waitStarted(t)
	require.Eventually(t, func() bool { return wh.Addr() != "" }, convergeWithin, 10*time.Millisecond)

	targets := []target{
		{name: "metrics", addr: mgr.MetricsAddr().String()},
		{name: "probes", addr: mgr.HealthProbeAddr().String()},
		{name: "webhook", addr: wh.Addr(), tls: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}},
	}
	// Control: each server answers a well-formed request.
	for _, tg := range targets {
		c := tg.dial(t)
		_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, tg.name)
		resp.Body.Close()
		c.Close()
	}

	var wg sync.WaitGroup
	for _, tg := range targets {
		wg.Add(2)
		go func() {
			defer wg.Done()
			took := slowloris(t, tg)
			t.Logf("%s: slowloris cut after %s", tg.name, took.Round(10*time.Millisecond))
			assert.LessOrEqual(t, took, readHeaderTimeout+time.Second, "%s: cut within ReadHeaderTimeout plus a second", tg.name)
			assert.GreaterOrEqual(t, took, readHeaderTimeout-time.Second, "%s: cut by the header timeout, not sooner", tg.name)
		}()
		go func() {
			defer wg.Done()
			code, took := bigHeaders(t, tg)
			t.Logf("%s: 1 MiB + 64 KiB of headers answered %d after %s", tg.name, code, took.Round(time.Millisecond))
			assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, code, "%s: oversized headers get 431", tg.name)
			assert.LessOrEqual(t, took, readHeaderTimeout+time.Second, tg.name)
		}()
	}
	wg.Wait()
}
