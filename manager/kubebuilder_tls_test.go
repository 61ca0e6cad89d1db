package manager_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/certwatcher"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/webhook"
	"github.com/kubeloop/kubeloop/webhook/admission"
)

// TestKubebuilderMainCertWatchers is the kubebuilder v4 scaffold's
// main.go, after the import-path rewrite: certwatchers for the webhook and
// the metrics certificates, installed through TLSOpts (HTTP/2 off as the
// scaffold does), the webhook server built with webhook.NewServer, and the
// webhook watcher run by the manager (mgr.Add). Both servers serve their
// watcher's certificate (the metrics one to a client that sends no server
// name, as a scraper dialling an IP does), and a rotation of the webhook
// pair is served without a restart, so the manager started the watcher.
func TestKubebuilderMainCertWatchers(t *testing.T) {
	ca := newTestCA(t)
	webhookCertPath, metricsCertPath := t.TempDir(), t.TempDir()
	ca.writePair(t, webhookCertPath, "tls.crt", "tls.key", 11)
	ca.writePair(t, metricsCertPath, "tls.crt", "tls.key", 21)

	var tlsOpts []func(*tls.Config)
	tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	webhookTLSOpts := tlsOpts
	var metricsCertWatcher, webhookCertWatcher *certwatcher.CertWatcher

	var err error
	webhookCertWatcher, err = certwatcher.New(filepath.Join(webhookCertPath, "tls.crt"), filepath.Join(webhookCertPath, "tls.key"))
	require.NoError(t, err)
	webhookCertWatcher.WithWatchInterval(50 * time.Millisecond).WithLogger(testLogger())
	webhookTLSOpts = append(webhookTLSOpts, func(config *tls.Config) {
		config.GetCertificate = webhookCertWatcher.GetCertificate
	})
	webhookServer := webhook.NewServer(webhook.Options{
		TLSOpts: webhookTLSOpts,
		Host:    "127.0.0.1", Port: webhook.AnyPort, // a test cannot take 9443
	})

	metricsServerOptions := manager.MetricsOptions{
		BindAddress:   "127.0.0.1:0",
		SecureServing: true,
		TLSOpts:       tlsOpts,
	}
	metricsCertWatcher, err = certwatcher.New(filepath.Join(metricsCertPath, "tls.crt"), filepath.Join(metricsCertPath, "tls.key"))
	require.NoError(t, err)
	metricsServerOptions.TLSOpts = append(metricsServerOptions.TLSOpts, func(config *tls.Config) {
		config.GetCertificate = metricsCertWatcher.GetCertificate
	})

	mgr := newManager(t, restConfig, manager.Options{
		Metrics:       metricsServerOptions,
		WebhookServer: webhookServer,
	})
	mgr.GetWebhookServer().Register("/validate-x", &webhook.Admission{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		return webhook.Allowed("")
	})})
	if metricsCertWatcher != nil {
		require.NoError(t, mgr.Add(metricsCertWatcher))
	}
	if webhookCertWatcher != nil {
		require.NoError(t, mgr.Add(webhookCertWatcher))
	}
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	require.Eventually(t, func() bool { return webhookServer.Addr() != "" && mgr.MetricsAddr() != nil }, 30*time.Second, 10*time.Millisecond)

	code, cert := httpsGet(t, "https://"+webhookServer.Addr()+"/validate-x", "", ca.pool)
	assert.Equal(t, http.StatusMethodNotAllowed, code, "the admission webhook answers (a GET is refused)")
	assert.EqualValues(t, 11, cert.SerialNumber.Int64(), "the webhook watcher's certificate")
	code, cert = httpsGet(t, "https://"+mgr.MetricsAddr().String()+"/metrics", "", ca.pool)
	assert.Equal(t, http.StatusOK, code)
	assert.EqualValues(t, 21, cert.SerialNumber.Int64(), "the metrics watcher's certificate, not a self-signed one")

	ca.writePair(t, webhookCertPath, "tls.crt", "tls.key", 12)
	require.Eventually(t, func() bool {
		_, cert := httpsGet(t, "https://"+webhookServer.Addr()+"/validate-x", "", ca.pool)
		return cert.SerialNumber.Int64() == 12
	}, 30*time.Second, 50*time.Millisecond, "the manager runs the watcher: the rotated pair is served")
}

// TestDisabledWebhookServer is controller-runtime's webhook.Options{Port:
// -1}: the manager keeps the server (GetWebhookServer returns it,
// registering works) but runs no webhook server, and starts and stops
// cleanly.
func TestDisabledWebhookServer(t *testing.T) {
	srv := webhook.NewServer(webhook.Options{Port: -1, CertDir: filepath.Join(t.TempDir(), "absent")})
	mgr := newManager(t, restConfig, manager.Options{WebhookServer: srv, HealthProbeBindAddress: "127.0.0.1:0"})
	require.Same(t, srv, mgr.GetWebhookServer())
	require.NotPanics(t, func() {
		mgr.GetWebhookServer().Register("/validate-x", &webhook.Admission{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
			return webhook.Allowed("")
		})})
	})
	r := start(mgr)
	require.Eventually(t, func() bool { return mgr.HealthProbeAddr() != nil }, 30*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		code, _ := get(t, "http://"+mgr.HealthProbeAddr().String()+"/readyz")
		return code == http.StatusOK
	}, 30*time.Second, 20*time.Millisecond, "ready without a webhook server")
	_, body := get(t, "http://"+mgr.HealthProbeAddr().String()+"/readyz?verbose")
	assert.NotContains(t, body, "webhook", "no webhook readiness check")
	assert.Empty(t, srv.Addr(), "nothing listens")
	require.NoError(t, r.stop(t))
}
