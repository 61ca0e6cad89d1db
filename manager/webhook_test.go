package manager_test

import (
	"bytes"
	"crypto/tls"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/webhook"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestUserBuiltWebhookServerGetsManagerMetricsAndLogger is the kubebuilder
// scaffold's pattern: the user builds the webhook server (for its TLS
// options) and hands it to the manager. Its controller_runtime_webhook_*
// series land in the manager's registry and its logs in the manager's
// logger.
func TestUserBuiltWebhookServerGetsManagerMetricsAndLogger(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	ca.writePair(t, dir, "tls.crt", "tls.key", 7)
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: dir,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}})
	srv.Register("/validate-ping", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		logr.FromContextOrDiscard(r.Context()).Info("ping handled")
		w.WriteHeader(http.StatusNoContent)
	}))

	var logs lockedBuffer
	mgr, err := manager.New(restConfig, manager.Options{
		Logger:        logr.FromSlogHandler(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.Level(-4)})),
		WebhookServer: srv,
	})
	require.NoError(t, err)
	require.Same(t, srv, mgr.GetWebhookServer())
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	require.Eventually(t, func() bool { return srv.Addr() != "" }, 30*time.Second, 10*time.Millisecond)

	code, _ := httpsGet(t, "https://"+srv.Addr()+"/validate-ping", "", ca.pool)
	require.Equal(t, http.StatusNoContent, code)

	mfs, err := mgr.MetricsRegistry().Gather()
	require.NoError(t, err)
	found := false
	for _, mf := range mfs {
		if mf.GetName() != "controller_runtime_webhook_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["webhook"] == "/validate-ping" && labels["code"] == "204" {
				found = true
				assert.Equal(t, 1.0, m.GetCounter().GetValue())
			}
		}
	}
	assert.True(t, found, "the user-built server's requests are counted in the manager's registry")
	out := logs.String()
	assert.Contains(t, out, "serving webhooks", "the server logs through the manager's logger")
	assert.True(t, strings.Contains(out, "ping handled") && strings.Contains(out, "webhook=/validate-ping"),
		"handlers log through the manager's logger, with the path: %s", out)
	assert.Contains(t, out, "logger=webhook", "under the manager's webhook name")
}
