package webhook_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/certwatcher"
	"github.com/kubeloop/kubeloop/webhook"
	"github.com/kubeloop/kubeloop/webhook/admission"
)

// TestDisabledServer is controller-runtime's Port: -1: handlers can be
// registered, nothing is served, the readiness check passes, and Start
// only waits for its context.
func TestDisabledServer(t *testing.T) {
	for _, port := range []int{webhook.DisabledPort, -2} {
		srv := webhook.NewServer(webhook.Options{Port: port, CertDir: filepath.Join(t.TempDir(), "absent"), Logger: quiet})
		require.True(t, srv.Disabled())
		require.NotPanics(t, func() {
			srv.Register("/validate-x", &webhook.Admission{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
				return webhook.Allowed("")
			})})
		})
		assert.NoError(t, srv.StartedChecker()(nil), "a disabled server is ready")

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Start(ctx) }()
		select {
		case err := <-done:
			t.Fatalf("Start returned before its context ended: %v (the missing CertDir must not be read)", err)
		case <-time.After(100 * time.Millisecond):
		}
		assert.Empty(t, srv.Addr(), "nothing listens")
		cancel()
		require.NoError(t, <-done)
		assert.ErrorContains(t, srv.Start(t.Context()), "already started")

		// The handler is still reachable through ServeHTTP (a test may call it).
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/validate-x", nil))
		assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	}
	assert.False(t, webhook.NewServer(webhook.Options{Port: webhook.AnyPort}).Disabled())
	assert.False(t, webhook.NewServer(webhook.Options{}).Disabled())
}

// TestTLSOptsCertificateWins is the kubebuilder scaffold's main.go: a
// certwatcher's GetCertificate set through TLSOpts is served, and the
// server's CertDir (absent here) is not read; a rotation of the watched
// files reaches a plain HTTPS client.
func TestTLSOptsCertificateWins(t *testing.T) {
	ca := webhook.NewCertAuthority("tlsopts-ca")
	dir := webhook.CertDir(t, ca)
	w, err := certwatcher.New(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	require.NoError(t, err)
	w.WithWatchInterval(20 * time.Millisecond).WithLogger(quiet)
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan error, 1)
	go func() { watched <- w.Start(ctx) }()
	defer func() {
		cancel()
		assert.NoError(t, <-watched)
	}()

	var tlsOpts []func(*tls.Config)
	tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	tlsOpts = append(tlsOpts, func(c *tls.Config) { c.GetCertificate = w.GetCertificate })
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort,
		CertDir: filepath.Join(t.TempDir(), "absent"), TLSOpts: tlsOpts, Logger: quiet})
	srv.Register("/ping", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	startServer(t, srv)

	resp, err := httpsClient(ca, false).Get("https://" + srv.Addr() + "/ping")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)

	c, k, serial := ca.Serving()
	require.NoError(t, webhook.WritePair(dir, c, k))
	require.Eventually(t, func() bool {
		got, err := webhook.PeerSerial(srv.Addr(), ca.Pool())
		return err == nil && got.Cmp(serial) == 0
	}, 10*time.Second, 20*time.Millisecond, "the rotated certificate is served")
}

// TestTLSOptsCertificatesWin: Certificates set by TLSOpts are served too,
// and the server's CertDir is not read.
func TestTLSOptsCertificatesWin(t *testing.T) {
	ca := webhook.NewCertAuthority("tlsopts-ca")
	c, k, serial := ca.Serving()
	pair, err := tls.X509KeyPair(c, k)
	require.NoError(t, err)
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort,
		CertDir: filepath.Join(t.TempDir(), "absent"), Logger: quiet,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.Certificates = []tls.Certificate{pair} }}})
	startServer(t, srv)
	got, err := webhook.PeerSerial(srv.Addr(), ca.Pool())
	require.NoError(t, err)
	assert.Zero(t, got.Cmp(serial))
}
