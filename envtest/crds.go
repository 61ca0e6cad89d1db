package envtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRDs creates or updates crds and waits until each is established
// and every served version is in discovery.
func (e *Environment) InstallCRDs(ctx context.Context, crds ...*unstructured.Unstructured) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.config == nil {
		return errors.New("envtest: environment not started")
	}
	created, err := installCRDs(ctx, e.config, crds, 0)
	e.createdCRDs = append(e.createdCRDs, created...)
	return err
}

// ApplyCRDs installs crds on any cluster cfg reaches (the demo uses it
// against an existing cluster) and waits until each is served.
func ApplyCRDs(ctx context.Context, cfg *rest.Config, crds ...*unstructured.Unstructured) error {
	_, err := installCRDs(ctx, cfg, crds, 0)
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
	_, err = installCRDs(ctx, cfg, crds, options.PollInterval)
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
	return uninstallCRDs(ctx, cfg, crdNames(crds))
}

// read returns the CRDs of Paths and CRDs.
func (o *CRDInstallOptions) read(errorIfMissing bool) ([]*unstructured.Unstructured, error) {
	crds, err := readCRDs(o.Paths, !errorIfMissing)
	if err != nil {
		return nil, err
	}
	return append(crds, o.CRDs...), nil
}

// crdNames returns the names of crds.
func crdNames(crds []*unstructured.Unstructured) []string {
	names := make([]string, 0, len(crds))
	for _, c := range crds {
		names = append(names, c.GetName())
	}
	return names
}

// mergeNames returns a followed by the names of b not in a.
func mergeNames(a, b []string) []string {
	out := append([]string(nil), a...)
	seen := map[string]bool{}
	for _, n := range a {
		seen[n] = true
	}
	for _, n := range b {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// ReadCRDs reads the CustomResourceDefinitions in YAML files, or in the
// *.yaml, *.yml and *.json files of directories. A path that does not exist
// is an error (errors.Is(err, fs.ErrNotExist)).
func ReadCRDs(paths ...string) ([]*unstructured.Unstructured, error) {
	return readCRDs(paths, false)
}

// readCRDs is ReadCRDs, skipping paths that do not exist when
// skipMissing.
func readCRDs(paths []string, skipMissing bool) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil && skipMissing && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		files, err := manifestFiles(p)
		if err != nil {
			return nil, fmt.Errorf("envtest: CRD path: %w", err)
		}
		for _, f := range files {
			docs, err := readDocuments(f)
			if err != nil {
				return nil, err
			}
			for i, doc := range docs {
				u := &unstructured.Unstructured{Object: doc}
				if u.GetKind() != "CustomResourceDefinition" {
					return nil, fmt.Errorf("envtest: %s: document %d is a %q, not a CustomResourceDefinition", f, i, u.GetKind())
				}
				out = append(out, u)
			}
		}
	}
	return out, nil
}

// loadCRDs reads CRDDirectoryPaths (skipping missing paths unless
// ErrorIfCRDPathMissing) and adds CRDs.
func (e *Environment) loadCRDs() ([]*unstructured.Unstructured, error) {
	crds, err := readCRDs(e.CRDDirectoryPaths, !e.ErrorIfCRDPathMissing)
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

// installCRDs creates or updates crds, waits until each is served and
// returns the names of those it created (not updated).
func installCRDs(ctx context.Context, cfg *rest.Config, crds []*unstructured.Unstructured, poll time.Duration) (created []string, err error) {
	if len(crds) == 0 {
		return nil, nil
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("envtest: dynamic client: %w", err)
	}
	// Readiness is checked with plain requests: client-go's clients would
	// hide the API server's early "429, retry after 1s" answers for a new
	// resource by sleeping, and the first reads of a test would pay it.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("envtest: HTTP client: %w", err)
	}
	client := dyn.Resource(crdResource)
	for _, crd := range crds {
		obj := crd.DeepCopy()
		obj.SetResourceVersion("")
		_, err := client.Create(ctx, obj, metav1.CreateOptions{})
		if err == nil {
			created = append(created, obj.GetName())
		}
		if apierrors.IsAlreadyExists(err) {
			var existing *unstructured.Unstructured
			if existing, err = client.Get(ctx, obj.GetName(), metav1.GetOptions{}); err == nil {
				obj.SetResourceVersion(existing.GetResourceVersion())
				_, err = client.Update(ctx, obj, metav1.UpdateOptions{})
			}
		}
		if err != nil {
			return created, fmt.Errorf("envtest: install CRD %s: %w", crd.GetName(), err)
		}
	}
	for _, crd := range crds {
		if err := waitCRD(ctx, client, httpClient, strings.TrimSuffix(cfg.Host, "/"), crd, cmp.Or(poll, 50*time.Millisecond)); err != nil {
			return created, err
		}
	}
	warmUp(ctx, dyn, crds)
	return created, nil
}

// uninstallCRDs deletes the CRDs named.
func uninstallCRDs(ctx context.Context, cfg *rest.Config, names []string) error {
	if len(names) == 0 {
		return nil
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("envtest: dynamic client: %w", err)
	}
	var errs []error
	for _, name := range names {
		err := dyn.Resource(crdResource).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("envtest: delete CRD %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// warmUp sends one dry-run create per CRD, all at once. kube-apiserver
// spends about 2 s on the first write of a new custom resource (valid or
// not); paying it here, in parallel, keeps it out of the tests' and the
// demo's first writes. Errors (the stub is usually invalid) are expected
// and ignored.
func warmUp(ctx context.Context, dyn dynamic.Interface, crds []*unstructured.Unstructured) {
	var wg sync.WaitGroup
	for _, crd := range crds {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		scope, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			m, _ := v.(map[string]any)
			if storage, _ := m["storage"].(bool); !storage {
				continue
			}
			gvr := schema.GroupVersionResource{Group: group, Version: fmt.Sprint(m["name"]), Resource: plural}
			stub := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": gvr.GroupVersion().String(), "kind": kind,
				"metadata": map[string]any{"name": "envtest-warm-up"},
			}}
			var ri dynamic.ResourceInterface = dyn.Resource(gvr)
			if scope == "Namespaced" {
				ri = dyn.Resource(gvr).Namespace(metav1.NamespaceDefault)
			}
			wg.Go(func() {
				_, _ = ri.Create(ctx, stub, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			})
		}
	}
	wg.Wait()
}

// waitCRD waits until crd is Established and each served version answers
// discovery and a list at once.
func waitCRD(ctx context.Context, client dynamic.ResourceInterface, httpClient *http.Client, host string, crd *unstructured.Unstructured, poll time.Duration) error {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var last error
	for {
		last = crdReady(ctx, client, httpClient, host, crd.GetName(), group, plural, versions)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("envtest: CRD %s not served: %w (last: %v)", crd.GetName(), ctx.Err(), last)
		case <-time.After(poll):
		}
	}
}

func crdReady(ctx context.Context, client dynamic.ResourceInterface, httpClient *http.Client, host, name, group, plural string, versions []any) error {
	got, err := client.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	established := false
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			established = true
		}
	}
	if !established {
		return errors.New("not established yet")
	}
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if served, _ := m["served"].(bool); !served {
			continue
		}
		gv := group + "/" + fmt.Sprint(m["name"])
		body, err := getOnce(ctx, httpClient, host+"/apis/"+gv)
		if err != nil {
			return err
		}
		if !strings.Contains(string(body), `"name":"`+plural+`"`) {
			return fmt.Errorf("%s not yet in discovery of %s", plural, gv)
		}
		if _, err := getOnce(ctx, httpClient, host+"/apis/"+gv+"/"+plural+"?limit=1"); err != nil {
			return err
		}
	}
	return nil
}

// getOnce GETs url without retries and wants 200.
func getOnce(ctx context.Context, c *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, nil
}
