package envtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest/internal/manifests"
	"github.com/kubeloop/kubeloop/envtest/internal/pki"
	"github.com/kubeloop/kubeloop/envtest/internal/process"
)

// WebhookInstallOptions install admission webhook configurations that
// point at a webhook server the test runs on loopback, controller-runtime's
// envtest.WebhookInstallOptions. Start reads the configurations, makes a
// CA and a serving certificate, picks a port, rewrites every webhook's
// clientConfig to https://LocalServingHost:LocalServingPort<path> with the
// CA bundle, and creates the configurations; it fills the LocalServing*
// fields, so the test starts its server with them:
//
//	opts := &env.WebhookInstallOptions
//	srv := webhook.NewServer(webhook.Options{
//		Host: opts.LocalServingHost, Port: opts.LocalServingPort, CertDir: opts.LocalServingCertDir,
//	})
//
// Stop deletes the certificate directory it made and, with an existing
// cluster, the configurations Start created. The zero value installs
// nothing.
type WebhookInstallOptions struct {
	// Paths are YAML or JSON files, or directories of *.yaml, *.yml and
	// *.json files, such as kubebuilder's config/webhook. Their
	// MutatingWebhookConfigurations and ValidatingWebhookConfigurations are
	// installed; every other document (a Service, a kustomization) is
	// skipped. A path that does not exist fails Start unless
	// IgnoreErrorIfPathMissing.
	Paths []string
	// MutatingWebhooks are installed beside those of Paths.
	MutatingWebhooks []*admissionv1.MutatingWebhookConfiguration
	// ValidatingWebhooks are installed beside those of Paths.
	ValidatingWebhooks []*admissionv1.ValidatingWebhookConfiguration
	// IgnoreErrorIfPathMissing skips Paths that do not exist. False: a
	// missing path fails Start.
	IgnoreErrorIfPathMissing bool

	// LocalServingHost is the address the API server calls; "" means
	// 127.0.0.1. The serving certificate is valid for it and for localhost.
	LocalServingHost string
	// LocalServingPort is the port the API server calls; 0 means a port
	// that was free at Start. Start sets it.
	LocalServingPort int
	// LocalServingCertDir receives tls.crt and tls.key, the serving pair;
	// "" means a temporary directory that Stop removes. Start sets it.
	LocalServingCertDir string
	// LocalServingCAData is the PEM CA certificate that signed the serving
	// certificate, the configurations' caBundle. Start sets it.
	LocalServingCAData []byte

	// ownCertDir is set when Start made LocalServingCertDir.
	ownCertDir bool
	// created are the configurations Start created (not those it
	// updated), for Stop to delete on an existing cluster.
	createdMutating, createdValidating []string
}

func (o *WebhookInstallOptions) empty() bool {
	return len(o.Paths) == 0 && len(o.MutatingWebhooks) == 0 && len(o.ValidatingWebhooks) == 0
}

// webhookConfigs are the configurations to install.
type webhookConfigs struct {
	mutating   []*admissionv1.MutatingWebhookConfiguration
	validating []*admissionv1.ValidatingWebhookConfiguration
}

// load reads Paths and copies the configurations given in the options.
func (o *WebhookInstallOptions) load() (webhookConfigs, error) {
	var c webhookConfigs
	if o.empty() {
		return c, nil
	}
	var err error
	if c.mutating, c.validating, err = readWebhooks(o.Paths, o.IgnoreErrorIfPathMissing); err != nil {
		return c, err
	}
	for _, w := range o.MutatingWebhooks {
		c.mutating = append(c.mutating, w.DeepCopy())
	}
	for _, w := range o.ValidatingWebhooks {
		c.validating = append(c.validating, w.DeepCopy())
	}
	return c, nil
}

// install prepares certificates and port and installs the configurations
// through cfg.
func (o *WebhookInstallOptions) install(ctx context.Context, cfg *rest.Config, c webhookConfigs) error {
	if o.empty() {
		return nil
	}
	mutating, validating := c.mutating, c.validating
	if err := o.prepareServing(); err != nil {
		return err
	}
	for _, w := range mutating {
		for i := range w.Webhooks {
			o.pointAt(&w.Webhooks[i].ClientConfig)
		}
	}
	for _, w := range validating {
		for i := range w.Webhooks {
			o.pointAt(&w.Webhooks[i].ClientConfig)
		}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("envtest: webhook clientset: %w", err)
	}
	api := cs.AdmissionregistrationV1()
	for _, w := range mutating {
		created, err := createOrUpdate(ctx, w, api.MutatingWebhookConfigurations())
		if err != nil {
			return fmt.Errorf("envtest: install MutatingWebhookConfiguration %s: %w", w.Name, err)
		}
		if created {
			o.createdMutating = append(o.createdMutating, w.Name)
		}
	}
	for _, w := range validating {
		created, err := createOrUpdate(ctx, w, api.ValidatingWebhookConfigurations())
		if err != nil {
			return fmt.Errorf("envtest: install ValidatingWebhookConfiguration %s: %w", w.Name, err)
		}
		if created {
			o.createdValidating = append(o.createdValidating, w.Name)
		}
	}
	return nil
}

// prepareServing picks the host and port and writes the serving pair.
func (o *WebhookInstallOptions) prepareServing() error {
	if o.LocalServingHost == "" {
		o.LocalServingHost = "127.0.0.1"
	}
	if o.LocalServingPort == 0 {
		port, err := process.FreePort()
		if err != nil {
			return err
		}
		o.LocalServingPort = port
	}
	ca, err := pki.NewAuthority()
	if err != nil {
		return err
	}
	hosts := []string{o.LocalServingHost}
	if o.LocalServingHost != "localhost" {
		hosts = append(hosts, "localhost")
	}
	certPEM, keyPEM, err := ca.Issue("envtest-webhook", nil, hosts)
	if err != nil {
		return err
	}
	if o.LocalServingCertDir == "" {
		dir, err := os.MkdirTemp("", "envtest-webhook-certs-")
		if err != nil {
			return fmt.Errorf("envtest: webhook certificate directory: %w", err)
		}
		o.LocalServingCertDir, o.ownCertDir = dir, true
	} else if err := os.MkdirAll(o.LocalServingCertDir, 0o700); err != nil {
		return fmt.Errorf("envtest: webhook certificate directory: %w", err)
	}
	if err := writeFile(filepath.Join(o.LocalServingCertDir, "tls.crt"), certPEM); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(o.LocalServingCertDir, "tls.key"), keyPEM); err != nil {
		return err
	}
	o.LocalServingCAData = ca.CertPEM
	return nil
}

// pointAt sends a webhook to the local server, keeping its path.
func (o *WebhookInstallOptions) pointAt(cc *admissionv1.WebhookClientConfig) {
	path := ""
	switch {
	case cc.Service != nil && cc.Service.Path != nil:
		path = *cc.Service.Path
	case cc.URL != nil:
		if u, err := url.Parse(*cc.URL); err == nil {
			path = u.RequestURI()
		}
	}
	if path == "/" {
		path = ""
	}
	local := "https://" + net.JoinHostPort(o.LocalServingHost, itoa(o.LocalServingPort)) + path
	cc.Service, cc.URL = nil, &local
	cc.CABundle = o.LocalServingCAData
}

// cleanup deletes what install made: the certificate directory when it
// made it and, when deleteConfigs, the configurations it created.
func (o *WebhookInstallOptions) cleanup(ctx context.Context, cfg *rest.Config, deleteConfigs bool) error {
	var errs []error
	if deleteConfigs && cfg != nil && len(o.createdMutating)+len(o.createdValidating) > 0 {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("envtest: webhook clientset: %w", err)
		}
		api := cs.AdmissionregistrationV1()
		for _, name := range o.createdMutating {
			if err := api.MutatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("envtest: delete MutatingWebhookConfiguration %s: %w", name, err))
			}
		}
		for _, name := range o.createdValidating {
			if err := api.ValidatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("envtest: delete ValidatingWebhookConfiguration %s: %w", name, err))
			}
		}
	}
	o.createdMutating, o.createdValidating = nil, nil
	if o.ownCertDir {
		if err := os.RemoveAll(o.LocalServingCertDir); err != nil {
			errs = append(errs, fmt.Errorf("envtest: remove %s: %w", o.LocalServingCertDir, err))
		}
		o.LocalServingCertDir, o.ownCertDir = "", false
	}
	return errors.Join(errs...)
}

// webhookAPI is the part of a typed webhook configuration client that
// createOrUpdate uses.
type webhookAPI[T any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
}

// createOrUpdate creates obj, or replaces the existing one of its name;
// it reports whether it created it.
func createOrUpdate[T interface {
	*admissionv1.MutatingWebhookConfiguration | *admissionv1.ValidatingWebhookConfiguration
	metav1.Object
}](ctx context.Context, obj T, api webhookAPI[T]) (bool, error) {
	obj.SetResourceVersion("")
	_, err := api.Create(ctx, obj, metav1.CreateOptions{})
	if err == nil {
		return true, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return false, err
	}
	for attempt := 0; ; attempt++ {
		existing, err := api.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		obj.SetResourceVersion(existing.GetResourceVersion())
		_, err = api.Update(ctx, obj, metav1.UpdateOptions{})
		if err == nil || !apierrors.IsConflict(err) || attempt == 4 {
			return false, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readWebhooks reads the webhook configurations in paths.
func readWebhooks(paths []string, ignoreMissing bool) ([]*admissionv1.MutatingWebhookConfiguration, []*admissionv1.ValidatingWebhookConfiguration, error) {
	var mutating []*admissionv1.MutatingWebhookConfiguration
	var validating []*admissionv1.ValidatingWebhookConfiguration
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil && ignoreMissing && errors.Is(err, os.ErrNotExist) {
			continue
		}
		files, err := manifests.Files(p)
		if err != nil {
			return nil, nil, fmt.Errorf("envtest: webhook path: %w", err)
		}
		for _, f := range files {
			docs, err := manifests.Documents(f)
			if err != nil {
				return nil, nil, err
			}
			for i, doc := range docs {
				apiVersion, _ := doc["apiVersion"].(string)
				if apiVersion != admissionv1.SchemeGroupVersion.String() {
					continue
				}
				switch doc["kind"] {
				case "MutatingWebhookConfiguration":
					w := &admissionv1.MutatingWebhookConfiguration{}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(doc, w); err != nil {
						return nil, nil, fmt.Errorf("envtest: %s: document %d: %w", f, i, err)
					}
					mutating = append(mutating, w)
				case "ValidatingWebhookConfiguration":
					w := &admissionv1.ValidatingWebhookConfiguration{}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(doc, w); err != nil {
						return nil, nil, fmt.Errorf("envtest: %s: document %d: %w", f, i, err)
					}
					validating = append(validating, w)
				}
			}
		}
	}
	return mutating, validating, nil
}
