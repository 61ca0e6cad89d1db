package webhook_test

import (
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/certwatcher"
	"github.com/kubeloop/kubeloop/webhook"
)

// TestServerCertificateReadsCounted: the Server's certificate watcher
// counts its reads of CertDir in certwatcher_read_certificate_total on the
// Server's registerer, as controller-runtime's webhook server's
// certwatcher does; a CertWatcher of one's own counts failed reads too.
func TestServerCertificateReadsCounted(t *testing.T) {
	ca := webhook.NewCertAuthority("unit-ca")
	reg := prometheus.NewRegistry()
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: webhook.CertDir(t, ca), Metrics: reg, Logger: quiet})
	assert.Equal(t, 0.0, metricValue(t, reg, "certwatcher_read_certificate_total"), "served at 0")
	startServer(t, srv)
	assert.GreaterOrEqual(t, metricValue(t, reg, "certwatcher_read_certificate_total"), 1.0, "Start loaded the pair")
	assert.Equal(t, 0.0, metricValue(t, reg, "certwatcher_read_certificate_errors_total"))

	own := prometheus.NewRegistry()
	m, err := certwatcher.NewMetrics(own)
	require.NoError(t, err)
	dir := t.TempDir()
	w := webhook.NewCertWatcher(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), quiet).WithMetrics(m)
	require.Error(t, w.Load(), "no files")
	assert.Equal(t, 1.0, metricValue(t, own, "certwatcher_read_certificate_total"))
	assert.Equal(t, 1.0, metricValue(t, own, "certwatcher_read_certificate_errors_total"))
}
