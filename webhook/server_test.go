package webhook_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/webhook"
	"github.com/kubeloop/kubeloop/webhook/admission"
)

// quiet silences the servers of the tests.
var quiet = logr.FromSlogHandler(slog.DiscardHandler)

// startServer starts srv and stops it at the end of the test, checking
// that Start returned nil.
func startServer(t *testing.T, srv *webhook.Server) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			done <- err
			return true // Start failed; the check below reports it
		default:
		}
		return srv.StartedChecker()(nil) == nil
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, srv.StartedChecker()(nil), "the server serves")
}

func httpsClient(ca *webhook.CertAuthority, http2 bool) *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2: http2,
	}, Timeout: 10 * time.Second}
}

func TestServerServesRegisteredPaths(t *testing.T) {
	ca := webhook.NewCertAuthority("unit-ca")
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: webhook.CertDir(t, ca), Logger: quiet})
	assert.False(t, srv.NeedLeaderElection())
	assert.Empty(t, srv.Addr(), "not bound before Start")
	assert.Error(t, srv.StartedChecker()(nil), "not ready before Start")

	srv.Register("/hello", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello "+r.Proto)
	}))
	startServer(t, srv)
	// Registering after Start works too.
	srv.Register("/late", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))

	c := httpsClient(ca, true)
	base := "https://" + srv.Addr()
	resp, err := c.Get(base + "/hello")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "hello HTTP/1.1", string(body), "HTTP/2 is off by default")

	for path, want := range map[string]int{"/late": http.StatusTeapot, "/hello/more": http.StatusNotFound, "/": http.StatusNotFound} {
		resp, err := c.Get(base + path)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, path)
	}
	c.CloseIdleConnections()

	_, err = tls.Dial("tcp", srv.Addr(), &tls.Config{RootCAs: ca.Pool(), MaxVersion: tls.VersionTLS11})
	assert.Error(t, err, "TLS below 1.2 is refused")

	assert.Panics(t, func() { srv.Register("/hello", http.NotFoundHandler()) }, "a duplicate path")
	assert.Panics(t, func() { srv.Register("nope", http.NotFoundHandler()) }, "a path without /")
}

func TestServerHTTP2WhenEnabled(t *testing.T) {
	ca := webhook.NewCertAuthority("unit-ca")
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: webhook.CertDir(t, ca), EnableHTTP2: true, Logger: quiet})
	srv.Register("/proto", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.Proto) }))
	startServer(t, srv)
	c := httpsClient(ca, true)
	defer c.CloseIdleConnections()
	resp, err := c.Get("https://" + srv.Addr() + "/proto")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "HTTP/2.0", string(body))
}

func TestServerStartErrors(t *testing.T) {
	ca := webhook.NewCertAuthority("unit-ca")

	t.Run("missing certificate", func(t *testing.T) {
		dir := t.TempDir()
		srv := webhook.NewServer(webhook.Options{Port: webhook.AnyPort, CertDir: dir, Logger: quiet})
		assert.ErrorContains(t, srv.Start(t.Context()), dir+"/tls.crt")
	})
	t.Run("port taken", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		port := ln.Addr().(*net.TCPAddr).Port
		srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: webhook.CertDir(t, ca), Logger: quiet})
		assert.ErrorContains(t, srv.Start(t.Context()), "webhook: listen")
	})
	t.Run("started twice", func(t *testing.T) {
		srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: webhook.CertDir(t, ca), Logger: quiet})
		startServer(t, srv)
		assert.ErrorContains(t, srv.Start(t.Context()), "already started")
	})
	t.Run("metrics name clash", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "controller_runtime_webhook_requests_total"}))
		srv := webhook.NewServer(webhook.Options{Port: webhook.AnyPort, CertDir: webhook.CertDir(t, ca), Metrics: reg, Logger: quiet})
		assert.ErrorContains(t, srv.Start(t.Context()), "register metrics")
	})
}

func TestServerStopsWithContext(t *testing.T) {
	ca := webhook.NewCertAuthority("unit-ca")
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: webhook.CertDir(t, ca), Logger: quiet})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	require.Eventually(t, func() bool { return srv.StartedChecker()(nil) == nil }, 10*time.Second, 10*time.Millisecond)
	addr := srv.Addr()
	cancel()
	require.NoError(t, <-done)
	assert.Empty(t, srv.Addr())
	assert.Error(t, srv.StartedChecker()(nil))
	_, err := net.DialTimeout("tcp", addr, time.Second)
	assert.Error(t, err, "the listener is closed when Start returns")
}

func TestServerMetricsPanicsAndLimits(t *testing.T) {
	ca := webhook.NewCertAuthority("unit-ca")
	reg := prometheus.NewRegistry()
	srv := webhook.NewServer(webhook.Options{
		Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: webhook.CertDir(t, ca),
		Metrics: reg, Logger: quiet, MaxRequestBytes: 4096,
	})
	srv.Register("/raw-panic", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	srv.Register("/admit", &admission.Webhook{Handler: admission.HandlerFunc(func(_ context.Context, req admission.Request) admission.Response {
		if req.Name == "panic" {
			panic("admission boom")
		}
		return admission.Allowed("")
	})})
	startServer(t, srv)
	c := httpsClient(ca, false)
	defer c.CloseIdleConnections()
	base := "https://" + srv.Addr()

	post := func(path string, body []byte) (int, string) {
		t.Helper()
		resp, err := c.Post(base+path, "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	review := func(name string) []byte {
		return []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","name":"` + name + `","operation":"CREATE"}}`)
	}

	code, _ := post("/raw-panic", []byte("{}"))
	assert.Equal(t, http.StatusInternalServerError, code)

	code, body := post("/admit", review("panic"))
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `"allowed":false`)
	assert.Contains(t, body, `"code":500`)

	code, _ = post("/admit", review("fine"))
	assert.Equal(t, http.StatusOK, code)

	code, body = post("/admit", []byte(`{`+strings.Repeat(" ", 5000)+`}`))
	assert.Equal(t, http.StatusRequestEntityTooLarge, code, "the server's limit applies")
	assert.Contains(t, body, "larger than 4096 bytes")

	code, _ = post("/admit", []byte(`{"kind":`))
	assert.Equal(t, http.StatusBadRequest, code)

	assert.Equal(t, 1.0, metricValue(t, reg, "controller_runtime_webhook_panics_total", "webhook", "/raw-panic"))
	assert.Equal(t, 1.0, metricValue(t, reg, "controller_runtime_webhook_panics_total", "webhook", "/admit"))
	for _, tt := range []struct {
		path, code string
		want       float64
	}{{"/admit", "200", 2}, {"/admit", "400", 1}, {"/admit", "413", 1}, {"/raw-panic", "500", 1}} {
		assert.Equal(t, tt.want, metricValue(t, reg, "controller_runtime_webhook_requests_total", "webhook", tt.path, "code", tt.code), "%s %s", tt.path, tt.code)
	}
	assert.Equal(t, 0.0, metricValue(t, reg, "controller_runtime_webhook_requests_in_flight", "webhook", "/admit"))
	assert.Equal(t, 4.0, metricValue(t, reg, "controller_runtime_webhook_latency_seconds", "webhook", "/admit"), "sample count")
}

// metricValue returns the value (a histogram's sample count) of the metric
// name whose labels include the given name/value pairs; it fails the test
// when there is none.
func metricValue(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue metrics
				}
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	t.Fatalf("no metric %s%v", name, labels)
	return 0
}

// TestServerOptions: Options returns what NewServer was given, defaults
// applied (controller-runtime's DefaultServer.Options), as a copy.
func TestServerOptions(t *testing.T) {
	minTLS13 := func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 }
	s := webhook.NewServer(webhook.Options{Port: 9443, TLSOpts: []func(*tls.Config){minTLS13}})
	got := s.Options()
	assert.Equal(t, 9443, got.Port)
	require.Len(t, got.TLSOpts, 1)
	c := &tls.Config{}
	got.TLSOpts[0](c)
	assert.Equal(t, uint16(tls.VersionTLS13), c.MinVersion)

	got.Port = 1
	assert.Equal(t, 9443, s.Options().Port, "a copy")
	assert.Equal(t, webhook.DefaultPort, webhook.NewServer(webhook.Options{}).Options().Port, "defaults applied")
}
