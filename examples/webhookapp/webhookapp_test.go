package webhookapp_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/examples/webhookapp"
	"github.com/kubeloop/kubeloop/internal/testenv"
	kmanager "github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/webhook"
)

var cfg *rest.Config

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{
		Env:   &envtest.Environment{CRDDirectoryPaths: []string{"config"}},
		Setup: func(c *rest.Config) error { cfg = c; return nil },
	})
}

// manager is the smallest webhook.Manager.
type manager struct {
	scheme *runtime.Scheme
	srv    *webhook.Server
}

func (m manager) GetScheme() *runtime.Scheme        { return m.scheme }
func (m manager) GetWebhookServer() *webhook.Server { return m.srv }

// warnings collects the API server's warnings.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func TestAppWebhooksThroughTheAPIServer(t *testing.T) {
	ctx := t.Context()
	caPEM, dir := servingCert(t)
	scheme := runtime.NewScheme()
	require.NoError(t, webhookapp.AddToScheme(scheme))
	srv := webhook.NewServer(webhook.Options{
		Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: dir,
		Logger: logr.FromSlogHandler(slog.DiscardHandler),
	})
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	// The manager owns the server: it starts it with the caches and
	// reports it in readiness.
	mgr, err := kmanager.New(cfg, kmanager.Options{Scheme: scheme, WebhookServer: srv,
		Logger: logr.FromSlogHandler(slog.DiscardHandler)})
	require.NoError(t, err)
	require.Same(t, srv, mgr.GetWebhookServer())
	require.NoError(t, webhookapp.Setup(mgr))
	srvCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(srvCtx) }()
	defer func() {
		cancel()
		assert.NoError(t, <-done)
	}()
	require.Eventually(t, func() bool { return srv.StartedChecker()(nil) == nil }, 10*time.Second, 10*time.Millisecond)
	registerWebhooks(t, "https://"+srv.Addr(), caPEM)

	var seen warnings
	c := rest.CopyConfig(cfg)
	c.WarningHandler = &seen
	rc, err := appClient(c, scheme)
	require.NoError(t, err)

	// Invalid: no image, too many replicas. Retried until the webhook
	// configuration has reached the API server.
	require.Eventually(t, func() bool {
		err := rc.Post().Namespace("default").Resource("apps").Body(&webhookapp.App{
			TypeMeta:   metav1.TypeMeta{APIVersion: "webhookapp.kubeloop.dev/v1", Kind: "App"},
			ObjectMeta: metav1.ObjectMeta{Name: "bad"},
			Spec:       webhookapp.AppSpec{Replicas: 20},
		}).Do(ctx).Error()
		return err != nil &&
			strings.Contains(err.Error(), "spec.image: Required value: an App needs an image") &&
			strings.Contains(err.Error(), "spec.replicas: Invalid value: 20: must be at most 10")
	}, 30*time.Second, 100*time.Millisecond)

	var created webhookapp.App
	require.NoError(t, rc.Post().Namespace("default").Resource("apps").Body(&webhookapp.App{
		TypeMeta:   metav1.TypeMeta{APIVersion: "webhookapp.kubeloop.dev/v1", Kind: "App"},
		ObjectMeta: metav1.ObjectMeta{Name: "good"},
		Spec:       webhookapp.AppSpec{Image: "nginx"},
	}).Do(ctx).Into(&created))
	assert.Equal(t, int32(1), created.Spec.Replicas, "replicas defaulted by the mutating webhook")
	seen.mu.Lock()
	assert.Contains(t, seen.list, "a single replica is not highly available")
	seen.mu.Unlock()
}

// appClient is a REST client for Apps.
func appClient(c *rest.Config, scheme *runtime.Scheme) (*rest.RESTClient, error) {
	c = rest.CopyConfig(c)
	c.GroupVersion = &webhookapp.GroupVersion
	c.APIPath = "/apis"
	c.NegotiatedSerializer = serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(scheme)}
	return rest.RESTClientFor(c)
}

// registerWebhooks points the API server at the App webhooks under base.
func registerWebhooks(t *testing.T, base string, caPEM []byte) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	gvk := webhookapp.GroupVersion.WithKind("App")
	none, fail := admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.Fail
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{gvk.Group}, APIVersions: []string{gvk.Version}, Resources: []string{"apps"}},
	}}
	client := func(path string) admissionregistrationv1.WebhookClientConfig {
		u := base + path
		return admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: caPEM}
	}
	_, err = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(t.Context(), &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "webhookapp"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mapp.webhookapp.kubeloop.dev", ClientConfig: client(webhook.MutatePath(gvk)), Rules: rules,
			SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(t.Context(), &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "webhookapp"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "vapp.webhookapp.kubeloop.dev", ClientConfig: client(webhook.ValidatePath(gvk)), Rules: rules,
			SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// servingCert makes a CA and a serving certificate for 127.0.0.1 signed by
// it, writes tls.crt and tls.key into a temporary directory, and returns
// the CA in PEM (the caBundle) and the directory.
func servingCert(t *testing.T) (caPEM []byte, dir string) {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		return k
	}
	caKey, key := newKey(), newKey()
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhookapp-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "webhookapp"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), dir
}
