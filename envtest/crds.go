package envtest

import (
	"cmp"
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest/internal/crd"
)

// InstallCRDs creates or updates crds and waits until each is established
// and every served version is in discovery.
func (e *Environment) InstallCRDs(ctx context.Context, crds ...*unstructured.Unstructured) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.config == nil {
		return errors.New("envtest: environment not started")
	}
	created, err := crd.Install(ctx, e.config, crds, 0)
	e.createdCRDs = append(e.createdCRDs, created...)
	return err
}

// ApplyCRDs installs crds on any cluster cfg reaches (the demo uses it
// against an existing cluster) and waits until each is served.
func ApplyCRDs(ctx context.Context, cfg *rest.Config, crds ...*unstructured.Unstructured) error {
	_, err := crd.Install(ctx, cfg, crds, 0)
	return err
}

// CRDInstallOptions are CRD sources and how to wait for them,
// controller-runtime's envtest.CRDInstallOptions. In an Environment, Paths
// and CRDs are installed beside CRDDirectoryPaths and CRDs; alone, they are
// what the package functions InstallCRDs and UninstallCRDs take.
type CRDInstallOptions struct {
	// Scheme is accepted and unused: controller-runtime decides from it
	// which CRDs get conversion webhooks; kubeloop installs CRDs as they
	// are written.
	Scheme *runtime.Scheme
	// Paths are files, or directories of *.yaml, *.yml and *.json files,
	// holding CustomResourceDefinitions.
	Paths []string
	// CRDs are installed beside those of Paths.
	CRDs []*unstructured.Unstructured
	// ErrorIfPathMissing fails on a Paths entry that does not exist;
	// false skips it. Inside an Environment, ErrorIfCRDPathMissing decides
	// instead (controller-runtime overwrites this field with it).
	ErrorIfPathMissing bool
	// MaxTime bounds the wait until every CRD is served; 0 means the
	// Environment's StartTimeout (10 s for the package function
	// InstallCRDs, as in controller-runtime).
	MaxTime time.Duration
	// PollInterval is how often readiness is checked; 0 means 50 ms.
	PollInterval time.Duration
	// CleanUpAfterUse makes Environment.Stop delete every CRD Start
	// installed on an existing cluster, also those that existed before
	// (without it Stop deletes only those Start created). On the
	// Environment's own control plane everything goes anyway.
	CleanUpAfterUse bool
	// WebhookOptions is accepted and unused (controller-runtime points
	// conversion webhooks at it); Environment.WebhookInstallOptions
	// installs admission webhooks.
	WebhookOptions WebhookInstallOptions
}

// InstallCRDs installs the CRDs of options on the cluster cfg reaches and
// waits until each is served, controller-runtime's envtest.InstallCRDs; it
// returns the CRDs installed.
func InstallCRDs(cfg *rest.Config, options CRDInstallOptions) ([]*unstructured.Unstructured, error) {
	crds, err := options.read(options.ErrorIfPathMissing)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(options.MaxTime, 10*time.Second))
	defer cancel()
	_, err = crd.Install(ctx, cfg, crds, options.PollInterval)
	return crds, err
}

// UninstallCRDs deletes the CRDs of options from the cluster cfg reaches;
// CRDs already gone are not an error.
func UninstallCRDs(cfg *rest.Config, options CRDInstallOptions) error {
	crds, err := options.read(options.ErrorIfPathMissing)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), cmp.Or(options.MaxTime, 10*time.Second))
	defer cancel()
	return crd.Uninstall(ctx, cfg, crd.Names(crds))
}

// read returns the CRDs of Paths and CRDs.
func (o *CRDInstallOptions) read(errorIfMissing bool) ([]*unstructured.Unstructured, error) {
	crds, err := crd.Read(o.Paths, !errorIfMissing)
	if err != nil {
		return nil, err
	}
	return append(crds, o.CRDs...), nil
}

// ReadCRDs reads the CustomResourceDefinitions in YAML files, or in the
// *.yaml, *.yml and *.json files of directories. A path that does not exist
// is an error (errors.Is(err, fs.ErrNotExist)).
func ReadCRDs(paths ...string) ([]*unstructured.Unstructured, error) {
	return crd.Read(paths, false)
}

// loadCRDs reads CRDDirectoryPaths (skipping missing paths unless
// ErrorIfCRDPathMissing) and adds CRDs.
func (e *Environment) loadCRDs() ([]*unstructured.Unstructured, error) {
	crds, err := crd.Read(e.CRDDirectoryPaths, !e.ErrorIfCRDPathMissing)
	if err != nil {
		return nil, err
	}
	more, err := e.CRDInstallOptions.read(e.ErrorIfCRDPathMissing)
	if err != nil {
		return nil, err
	}
	crds = append(append(crds, e.CRDs...), more...)
	// A CRD named twice (in a directory and in CRDInstallOptions, say) is
	// installed once, the last one read winning.
	last := map[string]int{}
	for i, c := range crds {
		last[c.GetName()] = i
	}
	out := crds[:0:0]
	for i, c := range crds {
		if last[c.GetName()] == i {
			out = append(out, c)
		}
	}
	return out, nil
}
