package webhook

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func serial(t *testing.T, c *tls.Certificate) string {
	t.Helper()
	require.NotNil(t, c)
	require.NotNil(t, c.Leaf)
	return c.Leaf.SerialNumber.String()
}

func TestCertWatcherReloadsChangedFiles(t *testing.T) {
	ca := NewCertAuthority("reload-ca")
	dir := t.TempDir()
	certA, keyA, serialA := ca.Serving()
	require.NoError(t, WritePair(dir, certA, keyA))

	synctest.Test(t, func(t *testing.T) {
		w := NewCertWatcher(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), logr.Discard())
		require.NoError(t, w.Load())
		got, err := w.GetCertificate(nil)
		require.NoError(t, err)
		assert.Equal(t, serialA.String(), serial(t, got))

		certB, keyB, serialB := ca.Serving()
		require.NoError(t, WritePair(dir, certB, keyB))
		got, err = w.GetCertificate(nil)
		require.NoError(t, err)
		assert.Equal(t, serialA.String(), serial(t, got), "files are looked at no more than once per interval")

		time.Sleep(CertCheckInterval)
		got, err = w.GetCertificate(nil)
		require.NoError(t, err)
		assert.Equal(t, serialB.String(), serial(t, got), "the new pair is served after the interval")

		// A half-done rotation: a new certificate beside the old key.
		certC, _, _ := ca.Serving()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.crt"), certC, 0o600))
		time.Sleep(CertCheckInterval)
		got, err = w.GetCertificate(nil)
		require.NoError(t, err)
		assert.Equal(t, serialB.String(), serial(t, got), "a mismatched pair is ignored")

		// Removed files keep the last good pair too.
		require.NoError(t, os.Remove(filepath.Join(dir, "tls.key")))
		time.Sleep(CertCheckInterval)
		got, err = w.GetCertificate(nil)
		require.NoError(t, err)
		assert.Equal(t, serialB.String(), serial(t, got))
	})
}

func TestCertWatcherLoadFails(t *testing.T) {
	dir := t.TempDir()
	w := NewCertWatcher(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), logr.Discard())
	assert.ErrorContains(t, w.Load(), "tls.crt")
	_, err := w.GetCertificate(nil)
	assert.ErrorContains(t, err, "no certificate loaded")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.crt"), []byte("junk"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.key"), []byte("junk"), 0o600))
	assert.ErrorContains(t, w.Load(), "key pair")
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	assert.Equal(t, DefaultPort, o.Port)
	assert.Equal(t, "tls.crt", o.CertName)
	assert.Equal(t, "tls.key", o.KeyName)
	assert.Equal(t, filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs"), o.CertDir)
	assert.Equal(t, int64(DefaultMaxRequestBytes), o.MaxRequestBytes)
	assert.Equal(t, 30*time.Second, o.ShutdownTimeout)
	assert.NotNil(t, o.Logger.GetSink())
	assert.Equal(t, AnyPort, Options{Port: AnyPort}.withDefaults().Port)
	assert.Equal(t, DisabledPort, Options{Port: -1}.withDefaults().Port)
	assert.Equal(t, DisabledPort, Options{Port: -7}.withDefaults().Port)
}
