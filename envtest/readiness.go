package envtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Waiting for the processes: the helpers apiserver.go and environment.go
// share; they call neither.

// waitCtx bounds one process's readiness wait by its own start timeout,
// when it has one.
func waitCtx(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}

// httpReady returns a check that GETs url and wants status 200 and body
// containing want.
func httpReady(c *http.Client, url, want string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
		}
		if want != "" && !strings.Contains(string(body), want) {
			return fmt.Errorf("%s: unexpected answer %q", url, body)
		}
		return nil
	}
}

// tlsClient returns an HTTP client that trusts the Environment's CA and
// presents the admin certificate.
func (e *Environment) tlsClient() (*http.Client, error) {
	cert, err := tls.X509KeyPair(e.adminCert, e.adminKey)
	if err != nil {
		return nil, fmt.Errorf("envtest: admin key pair: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(e.ca.cert)
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		}},
	}, nil
}
