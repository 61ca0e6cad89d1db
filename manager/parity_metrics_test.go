package manager_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/kubeloop/kubeloop/certwatcher"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/webhook"
)

// writePair writes a self-signed key pair to dir/tls.crt and dir/tls.key.
func writePair(t *testing.T, dir string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "parity"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
}

// sample returns the value of the sample line of /metrics that starts
// with prefix (a name and its labels), or -1.
func sample(body, prefix string) float64 {
	for _, l := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(l, prefix+" "); ok {
			v, err := strconv.ParseFloat(rest, 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// TestParitySeriesServed: the manager's /metrics serves controller-runtime's
// series for conversion webhook panics, certwatcher reads, the leader
// election slow path and client-side rate-limiter waits, with their types
// and help texts, and they count: a certwatcher added to the manager
// counts its reads there, and requests through a config with a
// RateLimiter observe their waits.
func TestParitySeriesServed(t *testing.T) {
	lease := unique("parity-series")
	cfg := rest.CopyConfig(restConfig)
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(50, 1)
	mgr := newManager(t, cfg, manager.Options{
		LeaderElection:          true,
		LeaderElectionID:        lease,
		LeaderElectionNamespace: "default",
		LeaseDuration:           leaseDuration,
		RenewDeadline:           renewDeadline,
		RetryPeriod:             retryPeriod,
		WebhookServer:           webhook.NewServer(webhook.Options{Port: webhook.DisabledPort}),
		Metrics:                 manager.MetricsOptions{BindAddress: "127.0.0.1:0"},
	})
	dir := t.TempDir()
	writePair(t, dir)
	cw, err := certwatcher.New(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	require.NoError(t, err)
	require.NoError(t, mgr.Add(cw))
	require.NoError(t, cw.ReadCertificate())
	require.NoError(t, os.Remove(filepath.Join(dir, "tls.key")))
	require.Error(t, cw.ReadCertificate())

	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	waitClosed(t, mgr.Elected(), 30*time.Second, "elected")
	for range 5 {
		require.NoError(t, client.IgnoreNotFound(mgr.GetAPIReader().Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "absent"}, &corev1.ConfigMap{})))
	}

	code, body := get(t, "http://"+mgr.MetricsAddr().String()+"/metrics")
	require.Equal(t, http.StatusOK, code)
	for _, want := range []string{
		"# HELP controller_runtime_conversion_webhook_panics_total Total number of conversion webhook panics\n# TYPE controller_runtime_conversion_webhook_panics_total counter\ncontroller_runtime_conversion_webhook_panics_total 0\n",
		"# HELP certwatcher_read_certificate_total Total number of certificate reads\n# TYPE certwatcher_read_certificate_total counter\n",
		"# HELP certwatcher_read_certificate_errors_total Total number of certificate read errors\n# TYPE certwatcher_read_certificate_errors_total counter\n",
		"# HELP leader_election_slowpath_total Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.\n# TYPE leader_election_slowpath_total counter\n",
		"# TYPE rest_client_rate_limiter_duration_seconds histogram\n",
	} {
		assert.Contains(t, body, want)
	}
	assert.GreaterOrEqual(t, sample(body, "certwatcher_read_certificate_total"), 2.0, "the reads of a watcher added to the manager")
	assert.GreaterOrEqual(t, sample(body, "certwatcher_read_certificate_errors_total"), 1.0)
	assert.Equal(t, 0.0, sample(body, `leader_election_slowpath_total{name="`+lease+`"}`))
	host := strings.TrimPrefix(restConfig.Host, "https://")
	assert.GreaterOrEqual(t, sample(body, `rest_client_rate_limiter_duration_seconds_count{host="`+host+`"}`), 5.0, "every request waited for the limiter once at least")
	assert.Regexp(t, regexp.MustCompile(`rest_client_rate_limiter_duration_seconds_bucket\{host="`+regexp.QuoteMeta(host)+`",le="0.005"\} \d+`), body, "client-go's buckets")
}

// TestNativeHistogramsOptIn: by default the manager's histograms are
// classic only; with Metrics.NativeHistogramBucketFactor they are native
// histograms too (a schema and spans), with the same classic buckets. A
// factor in (0, 1] is rejected.
func TestNativeHistogramsOptIn(t *testing.T) {
	histogram := func(mgr *manager.Manager, name string) *dto.Histogram {
		t.Helper()
		mfs, err := mgr.MetricsRegistry().Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() == name && len(mf.GetMetric()) > 0 {
				return mf.GetMetric()[0].GetHistogram()
			}
		}
		t.Fatalf("no %s", name)
		return nil
	}
	for _, tt := range []struct {
		name   string
		factor float64
		native bool
	}{{"default", 0, false}, {"opted in", 1.1, true}} {
		t.Run(tt.name, func(t *testing.T) {
			mgr := newManager(t, restConfig, manager.Options{Metrics: manager.MetricsOptions{BindAddress: "0", NativeHistogramBucketFactor: tt.factor}})
			for range 3 {
				require.NoError(t, client.IgnoreNotFound(mgr.GetAPIReader().Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "absent"}, &corev1.ConfigMap{})))
			}
			h := histogram(mgr, "rest_client_request_duration_seconds")
			assert.Len(t, h.GetBucket(), 12, "the classic buckets are kept")
			assert.GreaterOrEqual(t, h.GetSampleCount(), uint64(3))
			if tt.native {
				require.NotNil(t, h.Schema, "a native histogram has a schema")
				assert.Equal(t, int32(3), h.GetSchema(), "factor 1.1 is schema 3 (2^(2^-3) = 1.09)")
				assert.NotEmpty(t, h.GetPositiveSpan())
			} else {
				assert.Nil(t, h.Schema, "classic only")
				assert.Empty(t, h.GetPositiveSpan())
			}
		})
	}
	for _, bad := range []float64{-1, 0.5, 1} {
		_, err := manager.New(restConfig, manager.Options{Metrics: manager.MetricsOptions{NativeHistogramBucketFactor: bad}})
		assert.ErrorContains(t, err, "Metrics.NativeHistogramBucketFactor", "factor %v", bad)
	}
}

// TestMetricsServerCertificateReadsCounted: the HTTPS metrics server's own
// certificate watcher (Metrics.CertDir) counts its reads in the manager's
// certwatcher_read_certificate_total, as controller-runtime's metrics
// server's certwatcher does.
func TestMetricsServerCertificateReadsCounted(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	ca.writePair(t, dir, "tls.crt", "tls.key", 7)
	mgr := newManager(t, restConfig, manager.Options{Metrics: manager.MetricsOptions{BindAddress: "127.0.0.1:0", SecureServing: true, CertDir: dir}})
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	waitClosed(t, mgr.Elected(), 30*time.Second, "started")
	code, _ := httpsGet(t, "https://"+mgr.MetricsAddr().String()+"/metrics", "", ca.pool)
	require.Equal(t, http.StatusOK, code)
	mfs, err := mgr.MetricsRegistry().Gather()
	require.NoError(t, err)
	values := map[string]float64{}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "certwatcher_") {
			values[mf.GetName()] = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	assert.GreaterOrEqual(t, values["certwatcher_read_certificate_total"], 1.0, "the server's reads of CertDir")
	assert.Equal(t, 0.0, values["certwatcher_read_certificate_errors_total"])
}
