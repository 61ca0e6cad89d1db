package manager_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeloop/kubeloop/manager"
)

// testCA signs serving certificates for the HTTPS tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "manager-test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// writePair writes a new 127.0.0.1 serving pair into dir as certName and
// keyName and returns its serial number.
func (ca *testCA) writePair(t *testing.T, dir, certName, keyName string, serial int64) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "metrics"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	// The key first, then the certificate: a watcher that looks in between
	// sees a mismatched pair and keeps the old one.
	require.NoError(t, os.WriteFile(filepath.Join(dir, keyName), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, certName), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
}

// httpsGet GETs url over TLS trusting pool (nil: trusting anything) with
// an optional bearer token, on a fresh connection, and returns the status
// and the serving certificate.
func httpsGet(t *testing.T, url, token string, pool *x509.CertPool) (int, *x509.Certificate) {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, InsecureSkipVerify: pool == nil, MinVersion: tls.VersionTLS12}}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	require.NotNil(t, resp.TLS)
	return resp.StatusCode, resp.TLS.PeerCertificates[0]
}

// TestMetricsHTTPSWithAuthentication is the kubebuilder scaffold's secure
// metrics endpoint against the real API server with RBAC: certificates
// from a directory (custom file names), TokenReview and
// SubjectAccessReview with ServiceAccount tokens from the TokenRequest
// API, and a certificate rotation served without a restart.
func TestMetricsHTTPSWithAuthentication(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(restConfig)
	ctx := t.Context()
	reader, other := unique("https-reader"), unique("https-other")
	readerToken, otherToken := saToken(t, cs, reader), saToken(t, cs, other)
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: reader},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: reader},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: reader},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: reader, Namespace: "default"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	ca := newTestCA(t)
	dir := t.TempDir()
	ca.writePair(t, dir, "metrics.crt", "metrics.key", 100)
	mgr := newManager(t, restConfig, manager.Options{Metrics: manager.MetricsOptions{
		BindAddress: "127.0.0.1:0", SecureServing: true, FilterProvider: manager.WithAuthenticationAndAuthorization,
		CertDir: dir, CertName: "metrics.crt", KeyName: "metrics.key",
	}})
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	require.Eventually(t, func() bool { return mgr.MetricsAddr() != nil }, 30*time.Second, 10*time.Millisecond)
	url := "https://" + mgr.MetricsAddr().String() + "/metrics"

	// RBAC bindings reach the authorizer a moment after they are written.
	require.Eventually(t, func() bool {
		code, _ := httpsGet(t, url, readerToken, ca.pool)
		return code == http.StatusOK
	}, 30*time.Second, 100*time.Millisecond, "the bound service account reads the metrics")
	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"invalid token", "not-a-token", http.StatusUnauthorized},
		{"valid token without permission", otherToken, http.StatusForbidden},
		{"authorized token", readerToken, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, cert := httpsGet(t, url, tc.token, ca.pool)
			assert.Equal(t, tc.want, code)
			assert.Equal(t, int64(100), cert.SerialNumber.Int64(), "served with the certificate from CertDir")
		})
	}

	plain, err := http.Get("http://" + mgr.MetricsAddr().String() + "/metrics")
	if err == nil {
		plain.Body.Close()
		assert.Equal(t, http.StatusBadRequest, plain.StatusCode, "plain HTTP is not served")
	}

	ca.writePair(t, dir, "metrics.crt", "metrics.key", 200)
	require.Eventually(t, func() bool {
		_, cert := httpsGet(t, url, readerToken, ca.pool)
		return cert.SerialNumber.Int64() == 200
	}, 30*time.Second, 200*time.Millisecond, "the rotated pair is served without a restart")
}

func TestMetricsHTTPSSelfSigned(t *testing.T) {
	mgr := newManager(t, restConfig, manager.Options{Metrics: manager.MetricsOptions{
		BindAddress: "127.0.0.1:0", SecureServing: true,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 }},
	}})
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	require.Eventually(t, func() bool { return mgr.MetricsAddr() != nil }, 30*time.Second, 10*time.Millisecond)
	addr := mgr.MetricsAddr().String()

	code, cert := httpsGet(t, "https://"+addr+"/metrics", "", nil)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, cert.Subject.String(), cert.Issuer.String(), "self-signed")
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	_, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.1"})
	assert.NoError(t, err, "valid for 127.0.0.1")
	_, err = cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "localhost"})
	assert.NoError(t, err, "valid for localhost")

	_, err = tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12})
	assert.Error(t, err, "TLSOpts applied: TLS 1.2 refused")
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}})
	require.NoError(t, err)
	assert.Equal(t, "http/1.1", conn.ConnectionState().NegotiatedProtocol, "HTTP/2 is off")
	conn.Close()
}

func TestMetricsTLSOptionErrors(t *testing.T) {
	_, err := manager.New(restConfig, manager.Options{Logger: testLogger(), Metrics: manager.MetricsOptions{BindAddress: "127.0.0.1:0", CertDir: t.TempDir()}})
	assert.ErrorContains(t, err, "need Metrics.SecureServing")

	dir := t.TempDir()
	mgr := newManager(t, restConfig, manager.Options{Metrics: manager.MetricsOptions{BindAddress: "127.0.0.1:0", SecureServing: true, CertDir: dir}})
	err = start(mgr).wait(t, 30*time.Second)
	assert.ErrorContains(t, err, filepath.Join(dir, "tls.crt"), "a missing pair fails Start and names the file")
}
