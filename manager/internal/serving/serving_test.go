package serving_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/manager/internal/serving"
)

func TestServerShutdownWaitsForInFlight(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	s, err := serving.Listen("test", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/probe" {
			return
		}
		close(arrived)
		<-release
		_, _ = io.WriteString(w, "done")
	}), nil)
	require.NoError(t, err)
	var failed []error
	go s.Serve(func(err error) { failed = append(failed, err) })

	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + s.Addr().String() + "/")
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	<-arrived
	stopped := make(chan struct{})
	go func() { s.Shutdown(context.Background()); close(stopped) }()
	// Shutdown is under way once the listener refuses connections.
	require.Eventually(t, func() bool {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Get("http://" + s.Addr().String() + "/probe")
		if err == nil {
			resp.Body.Close()
		}
		return err != nil
	}, 10*time.Second, time.Millisecond)
	select {
	case <-stopped:
		t.Fatal("Shutdown returned with a request in flight")
	default:
	}
	close(release)
	<-stopped
	assert.Equal(t, "done", <-got, "the request in flight was answered")
	assert.Empty(t, failed, "a shutdown is no failure")
}

func TestListenTakenAddress(t *testing.T) {
	a, err := serving.Listen("first", "127.0.0.1:0", http.NotFoundHandler(), nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Close()) }()
	_, err = serving.Listen("metrics", a.Addr().String(), http.NotFoundHandler(), nil)
	assert.ErrorContains(t, err, "manager: metrics server: listen on "+a.Addr().String()+":")
}

func TestSelfSignedServesTLS(t *testing.T) {
	cert, err := serving.SelfSigned("kubeloop-test", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, "kubeloop-test", cert.Leaf.Subject.CommonName)
	assert.Contains(t, cert.Leaf.DNSNames, "localhost")
	assert.True(t, cert.Leaf.IsCA)
	assert.WithinDuration(t, time.Now().Add(time.Hour), cert.Leaf.NotAfter, time.Minute)

	s, err := serving.Listen("tls", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "secure")
	}), &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	go s.Serve(func(err error) { t.Error(err) })
	defer s.Shutdown(context.Background())
	assert.True(t, s.Secure)

	roots := x509.NewCertPool()
	roots.AddCert(cert.Leaf)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	defer c.CloseIdleConnections()
	resp, err := c.Get("https://" + s.Addr().String() + "/")
	require.NoError(t, err, "the certificate verifies for 127.0.0.1 against itself as root")
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	assert.Equal(t, "secure", string(b))
}

func TestProfiles(t *testing.T) {
	h := serving.Profiles()
	for _, tc := range []struct {
		name, path string
		wantCode   int
		wantBody   string
		wantType   string
	}{
		{"index", "/debug/pprof/", http.StatusOK, "goroutine ", "text/plain; charset=utf-8"},
		{"text goroutines", "/debug/pprof/goroutine?debug=1", http.StatusOK, "goroutine profile:", "text/plain; charset=utf-8"},
		{"binary heap", "/debug/pprof/heap?gc=1", http.StatusOK, "", "application/octet-stream"},
		{"unknown", "/debug/pprof/nope", http.StatusNotFound, `unknown profile "nope"`, "text/plain; charset=utf-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
			assert.Equal(t, tc.wantCode, rec.Code)
			assert.Contains(t, rec.Body.String(), tc.wantBody)
			assert.Equal(t, tc.wantType, rec.Header().Get("Content-Type"))
		})
	}
}

func TestMetricsTLS(t *testing.T) {
	own, err := serving.SelfSigned("own", time.Hour)
	require.NoError(t, err)
	tests := []struct {
		name     string
		opts     []func(*tls.Config)
		certFile string
		check    func(t *testing.T, cfg *tls.Config, err error)
	}{{
		name: "self-signed, HTTP/1.1 only",
		check: func(t *testing.T, cfg *tls.Config, err error) {
			require.NoError(t, err)
			require.Len(t, cfg.Certificates, 1)
			assert.Equal(t, "kubeloop-metrics", cfg.Certificates[0].Leaf.Subject.CommonName)
			assert.Equal(t, []string{"http/1.1"}, cfg.NextProtos)
			assert.Equal(t, uint16(tls.VersionTLS12), cfg.MinVersion)
		},
	}, {
		name: "a certificate from opts wins, HTTP/2 turned on by opts",
		opts: []func(*tls.Config){func(c *tls.Config) {
			c.Certificates = []tls.Certificate{own}
			c.NextProtos = []string{"h2", "http/1.1"}
		}},
		check: func(t *testing.T, cfg *tls.Config, err error) {
			require.NoError(t, err)
			require.Len(t, cfg.Certificates, 1)
			assert.Equal(t, "own", cfg.Certificates[0].Leaf.Subject.CommonName, "no self-signed one beside it")
			assert.Nil(t, cfg.GetCertificate)
			assert.Equal(t, []string{"h2", "http/1.1"}, cfg.NextProtos)
		},
	}, {
		name:     "a missing pair fails, naming it",
		certFile: "/nonexistent/tls.crt",
		check: func(t *testing.T, cfg *tls.Config, err error) {
			assert.ErrorContains(t, err, "manager: metrics server certificate:")
			assert.ErrorContains(t, err, "/nonexistent/tls.crt")
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := serving.MetricsTLS(tt.opts, tt.certFile, "/nonexistent/tls.key", logr.Discard(), nil)
			tt.check(t, cfg, err)
		})
	}
}
