package webhook_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/certwatcher"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/webhook"
	"github.com/kubeloop/kubeloop/webhook/admission"
	"github.com/kubeloop/kubeloop/webhook/internal/testwidget"
)

// The control plane and the webhook server shared by the integration
// tests. The API server calls the server at 127.0.0.1:<port>.
var (
	env        *envtest.Environment
	cfg        *rest.Config
	server     *webhook.Server
	serverRegs *prometheus.Registry
	certPath   string // the server's CertDir
)

const (
	mutatingName   = "kubeloop-webhook-test-mutating"
	validatingName = "kubeloop-webhook-test-validating"
	cmLabel        = "kubeloop-webhook-test"
)

func TestMain(m *testing.M) {
	env = &envtest.Environment{}
	ctx, cancel := context.WithCancel(context.Background())
	var stopped <-chan error // the server's Start result, once it runs
	testenv.Main(m, testenv.Options{
		Env: env,
		Setup: func(c *rest.Config) (err error) {
			cfg = c
			stopped, err = setup(ctx)
			return err
		},
		Teardown: func() error {
			cancel()
			if stopped == nil {
				return nil
			}
			if err := <-stopped; err != nil {
				fmt.Fprintln(os.Stderr, "webhook server:", err)
			}
			return nil
		},
	})
}

// setup starts the webhook server with a fresh CA and points the API
// server at it: the Widget CRD (v1 stored, v2 served, conversion through
// /convert) and the admission configurations. Once the server runs,
// stopped receives its Start result.
func setup(ctx context.Context) (stopped <-chan error, err error) {
	dir, err := os.MkdirTemp("", "kubeloop-webhook-test-")
	if err != nil {
		return nil, err
	}
	certPath = dir
	ca := webhook.NewCertAuthority("webhook-test-ca")
	c, k, _ := ca.Serving()
	if err := webhook.WritePair(dir, c, k); err != nil {
		return nil, err
	}
	// The kubebuilder v4 scaffold's pattern: a certwatcher whose
	// GetCertificate TLSOpts install, so the server's own CertDir (here a
	// directory that does not exist) is never read; the watcher runs
	// beside the server (a manager would run it after mgr.Add).
	watcher, err := certwatcher.New(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		return nil, err
	}
	watcher.WithLogger(quiet)
	serverRegs = prometheus.NewRegistry()
	server = webhook.NewServer(webhook.Options{
		Host: "127.0.0.1", Port: webhook.AnyPort, CertDir: filepath.Join(dir, "absent"), Metrics: serverRegs, Logger: quiet,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.GetCertificate = watcher.GetCertificate }},
	})
	scheme := newScheme()
	mgr := testManager{scheme: scheme, server: server}
	if err := webhook.ManagedBy(mgr, &testwidget.V1{}).WithDefaulter(widgetDefaulter{}).WithValidator(widgetValidator{}).Complete(); err != nil {
		return nil, err
	}
	server.Register("/validate-configmaps", &webhook.Admission{Handler: &configMapPolicy{decoder: admission.NewDecoder(scheme)}})
	done := make(chan error, 2)
	go func() {
		if err := watcher.Start(ctx); err != nil {
			done <- err
		}
	}()
	go func() {
		err := server.Start(ctx)
		os.RemoveAll(dir)
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for server.StartedChecker()(nil) != nil {
		if time.Now().After(deadline) {
			return done, errors.New("webhook server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return done, configureAPIServer(ctx, ca.PEM)
}

// configMapPolicy is a raw handler written as for controller-runtime:
// ConfigMaps with a "forbidden" key are denied, others are allowed with a
// warning that names the user RequestFromContext finds.
type configMapPolicy struct {
	decoder admission.Decoder
}

func (p *configMapPolicy) Handle(ctx context.Context, req admission.Request) admission.Response {
	cm := &corev1.ConfigMap{}
	if err := p.decoder.Decode(req, cm); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if _, ok := cm.Data["forbidden"]; ok {
		return webhook.Denied(`the key "forbidden" is not allowed here`)
	}
	fromCtx, err := admission.RequestFromContext(ctx)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.Allowed("").WithWarnings("configmap " + cm.Name + " checked for " + fromCtx.UserInfo.Username)
}

// configureAPIServer creates or updates the CRD and the webhook
// configurations with caBundle.
func configureAPIServer(ctx context.Context, caBundle []byte) error {
	base := "https://" + server.Addr()
	if err := env.InstallCRDs(ctx, widgetCRD(base+webhook.ConvertPath, caBundle)); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	url := func(path string) admissionregistrationv1.WebhookClientConfig {
		u := base + path
		return admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: caBundle}
	}
	widgetRule := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{testwidget.Group}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}},
	}}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: mutatingName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mwidget.test.kubeloop.dev", ClientConfig: url(webhook.MutatePath(testwidget.V1Kind)), Rules: widgetRule,
			SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: validatingName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "vwidget.test.kubeloop.dev", ClientConfig: url(webhook.ValidatePath(testwidget.V1Kind)), Rules: widgetRule,
			SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}, {
			Name: "vconfigmap.test.kubeloop.dev", ClientConfig: url("/validate-configmaps"),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{cmLabel: "true"}},
			SideEffects:       &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	mc := cs.AdmissionregistrationV1().MutatingWebhookConfigurations()
	if old, err := mc.Get(ctx, mutatingName, metav1.GetOptions{}); err == nil {
		mutating.ResourceVersion = old.ResourceVersion
		_, err = mc.Update(ctx, mutating, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
	} else if apierrors.IsNotFound(err) {
		if _, err := mc.Create(ctx, mutating, metav1.CreateOptions{}); err != nil {
			return err
		}
	} else {
		return err
	}
	vc := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if old, err := vc.Get(ctx, validatingName, metav1.GetOptions{}); err == nil {
		validating.ResourceVersion = old.ResourceVersion
		_, err = vc.Update(ctx, validating, metav1.UpdateOptions{})
		return err
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	_, err = vc.Create(ctx, validating, metav1.CreateOptions{})
	return err
}

// widgetCRD is the Widget CRD: v1 stored, v2 served, converted by the
// webhook at convertURL.
func widgetCRD(convertURL string, caBundle []byte) *unstructured.Unstructured {
	schema := func(props map[string]any) map[string]any {
		return map[string]any{"openAPIV3Schema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"spec": map[string]any{"type": "object", "properties": props},
			},
		}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets." + testwidget.Group},
		"spec": map[string]any{
			"group": testwidget.Group,
			"scope": "Namespaced",
			"names": map[string]any{"kind": "Widget", "listKind": "WidgetList", "plural": "widgets", "singular": "widget"},
			"conversion": map[string]any{
				"strategy": "Webhook",
				"webhook": map[string]any{
					"conversionReviewVersions": []any{"v1"},
					"clientConfig":             map[string]any{"url": convertURL, "caBundle": base64.StdEncoding.EncodeToString(caBundle)},
				},
			},
			"versions": []any{
				map[string]any{"name": "v1", "served": true, "storage": true, "schema": schema(map[string]any{
					"size": map[string]any{"type": "integer"}, "color": map[string]any{"type": "string"},
				})},
				map[string]any{"name": "v2", "served": true, "storage": false, "schema": schema(map[string]any{
					"width": map[string]any{"type": "integer"}, "color": map[string]any{"type": "string"},
				})},
			},
		},
	}}
}
