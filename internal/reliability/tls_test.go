package reliability_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// selfSignedCA returns a CA certificate (PEM) that also serves 127.0.0.1,
// and its key pair for a TLS server.
func selfSignedCA(t *testing.T, cn string) ([]byte, tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	pair, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	require.NoError(t, err)
	return certPEM, pair
}

// mitm is a TLS server with a certificate of its own that records what
// reaches it: connections, failed handshakes, and every request's
// Authorization header.
type mitm struct {
	caPEM []byte
	addr  string
	srv   *http.Server

	mu         sync.Mutex
	conns      int
	handshakes []string // handshake errors
	auth       []string // Authorization headers received
	requests   int
}

func newMITM(t *testing.T) *mitm {
	t.Helper()
	caPEM, pair := selfSignedCA(t, "mitm")
	m := &mitm{caPEM: caPEM}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	m.addr = ln.Addr().String()
	m.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m.mu.Lock()
			m.requests++
			if a := r.Header.Get("Authorization"); a != "" {
				m.auth = append(m.auth, a)
			}
			m.mu.Unlock()
			w.WriteHeader(http.StatusServiceUnavailable)
		}),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 5 * time.Second,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				m.mu.Lock()
				m.conns++
				m.mu.Unlock()
			}
		},
		ErrorLog: log.New(writerFunc(func(p []byte) {
			if strings.Contains(string(p), "TLS handshake error") {
				m.mu.Lock()
				m.handshakes = append(m.handshakes, strings.TrimSpace(string(p)))
				m.mu.Unlock()
			}
		}), "", 0),
	}
	go func() { _ = m.srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = m.srv.Close() })
	return m
}

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

func (m *mitm) seen() (conns, handshakeErrs, requests int, auth []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.conns, len(m.handshakes), m.requests, append([]string(nil), m.auth...)
}

// TestTLSVerification points the client and a manager at the API server
// with a CA that did not sign its certificate, with a server name its
// certificate does not carry, and at a man in the middle; each must fail
// with an x509 error, the man in the middle must never see the bearer
// token, and Insecure together with a CA must be refused at construction.
func TestTLSVerification(t *testing.T) {
	otherCA, _ := selfSignedCA(t, "other")
	canary := "canary-" + string(uuid.NewUUID())
	m := newMITM(t)

	wrongCA := rest.CopyConfig(restConfig)
	wrongCA.CAData, wrongCA.CAFile = otherCA, ""
	wrongSAN := rest.CopyConfig(restConfig)
	wrongSAN.ServerName = "not-the-apiserver.invalid"
	// The man in the middle answers on another address with its own
	// certificate; the client trusts only the API server's CA.
	viaMITM := rest.CopyConfig(restConfig)
	viaMITM.Host = "https://" + m.addr
	viaMITM.BearerToken = canary

	cases := []struct {
		name string
		cfg  *rest.Config
		want string
	}{
		{"wrong CA", wrongCA, "x509: certificate signed by unknown authority"},
		{"wrong SAN", wrongSAN, "x509: certificate is valid for"},
		{"man in the middle", viaMITM, "x509: certificate signed by unknown authority"},
	}
	for _, tc := range cases {
		t.Run(tc.name+"/client", func(t *testing.T) {
			c, err := client.New(tc.cfg, client.Options{})
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // hang bound
			defer cancel()
			err = c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kube-root-ca.crt"}, &corev1.ConfigMap{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
		t.Run(tc.name+"/readiness", func(t *testing.T) {
			nop := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
			// With the default, discovering mapper the controller cannot
			// even be built: discovery fails with the x509 error.
			mgr := newManager(t, tc.cfg, "default", manager.Options{})
			err := builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named(unique("tls")).Complete(nop)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			// With a static mapper it is built, and the failing list shows
			// in readiness.
			mgr = newManager(t, tc.cfg, "default", manager.Options{
				HealthProbeBindAddress: "127.0.0.1:0",
				MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
					m := meta.NewDefaultRESTMapper(nil)
					m.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
					return m, nil
				},
			})
			require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named(unique("tls")).Complete(nop))
			r := start(mgr)
			defer func() { _ = r.stop(t) }()
			var code int
			var body string
			require.Eventually(t, func() bool {
				code, body = probe(mgr, "/readyz?verbose")
				return code != 0 && strings.Contains(body, "x509")
			}, convergeWithin, 100*time.Millisecond, "readiness names the x509 failure")
			assert.NotEqual(t, http.StatusOK, code)
			t.Logf("readyz %d: %s", code, firstLine(body, "x509"))
		})
	}

	conns, handshakeErrs, requests, auth := m.seen()
	t.Logf("man in the middle: %d connections, %d failed handshakes, %d requests", conns, handshakeErrs, requests)
	require.Positive(t, conns, "the clients did dial the man in the middle")
	assert.Positive(t, handshakeErrs, "the handshakes were aborted")
	assert.Zero(t, requests, "no request got through the aborted handshake")
	assert.Empty(t, auth, "the bearer token never reached the man in the middle")

	// Positive control: a client that trusts the man in the middle's CA
	// sends it the token, so the recorder above can see one.
	trusting := rest.CopyConfig(viaMITM)
	trusting.CAData, trusting.CAFile = m.caPEM, ""
	c, err := client.New(trusting, client.Options{})
	require.NoError(t, err)
	_ = c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "x"}, &corev1.ConfigMap{})
	_, _, _, auth = m.seen()
	require.NotEmpty(t, auth, "the recorder sees a token when TLS lets it through")
	assert.Equal(t, "Bearer "+canary, auth[0])

	t.Run("Insecure with a CA", func(t *testing.T) {
		bad := rest.CopyConfig(restConfig)
		bad.Insecure = true
		_, err := client.New(bad, client.Options{})
		require.Error(t, err, "client.New")
		assert.Contains(t, err.Error(), "insecure")
		_, err = manager.New(bad, manager.Options{Logger: quiet()})
		require.Error(t, err, "manager.New")
		assert.Contains(t, err.Error(), "insecure")
	})
}

// probe returns the status and body of path on the manager's probe
// server, 0 when it cannot be reached.
func probe(mgr *manager.Manager, path string) (int, string) {
	addr := mgr.HealthProbeAddr()
	if addr == nil {
		return 0, ""
	}
	resp, err := http.Get("http://" + addr.String() + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func firstLine(s, containing string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, containing) {
			return l
		}
	}
	return ""
}
