package webhook_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/webhook"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func bufferLogger(b *syncBuffer) logr.Logger {
	return logr.FromSlogHandler(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.Level(-4)}))
}

func TestUseDefaultsFillsZeroMetricsAndLogger(t *testing.T) {
	ca := webhook.NewCertAuthority("unit-ca")
	// Built as the kubebuilder scaffold does: no Metrics, no Logger.
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: webhook.CertDir(t, ca)})
	srv.Register("/before", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logr.FromContextOrDiscard(r.Context()).Info("handled before-path")
	}))

	reg := prometheus.NewRegistry()
	var logs syncBuffer
	require.NoError(t, srv.UseDefaults(reg, bufferLogger(&logs)))
	srv.Register("/after", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	startServer(t, srv)

	c := httpsClient(ca, false)
	defer c.CloseIdleConnections()
	for path, want := range map[string]int{"/before": http.StatusOK, "/after": http.StatusAccepted} {
		resp, err := c.Get("https://" + srv.Addr() + path)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, path)
	}
	assert.Equal(t, 1.0, metricValue(t, reg, "controller_runtime_webhook_requests_total", "webhook", "/before", "code", "200"),
		"a handler registered before UseDefaults counts in the new registry")
	assert.Equal(t, 1.0, metricValue(t, reg, "controller_runtime_webhook_requests_total", "webhook", "/after", "code", "202"))
	assert.Contains(t, logs.String(), "serving webhooks", "the server logs to the given logger")
	assert.Contains(t, logs.String(), "handled before-path", "handlers find the given logger in their context")
	assert.Contains(t, logs.String(), "webhook=/before")

	assert.Error(t, srv.UseDefaults(prometheus.NewRegistry(), logr.Discard()), "too late once started")
}

func TestUseDefaultsKeepsExplicitOptions(t *testing.T) {
	ca := webhook.NewCertAuthority("unit-ca")
	own := prometheus.NewRegistry()
	var ownLogs, otherLogs syncBuffer
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: webhook.CertDir(t, ca),
		Metrics: own, Logger: bufferLogger(&ownLogs)})
	srv.Register("/x", http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	other := prometheus.NewRegistry()
	require.NoError(t, srv.UseDefaults(other, bufferLogger(&otherLogs)))
	startServer(t, srv)

	c := httpsClient(ca, false)
	defer c.CloseIdleConnections()
	resp, err := c.Get("https://" + srv.Addr() + "/x")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 1.0, metricValue(t, own, "controller_runtime_webhook_requests_total", "webhook", "/x", "code", "200"))
	mfs, err := other.Gather()
	require.NoError(t, err)
	assert.Empty(t, mfs, "nothing goes to the default registry when Metrics was set")
	assert.Contains(t, ownLogs.String(), "serving webhooks")
	assert.Empty(t, otherLogs.String())
}
