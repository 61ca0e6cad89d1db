package crd

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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest/internal/manifests"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Names returns the names of crds.
func Names(crds []*unstructured.Unstructured) []string {
	names := make([]string, 0, len(crds))
	for _, c := range crds {
		names = append(names, c.GetName())
	}
	return names
}

// MergeNames returns a followed by the names of b not in a.
func MergeNames(a, b []string) []string {
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

// Read reads the CustomResourceDefinitions in YAML or JSON files, or in
// the *.yaml, *.yml and *.json files of directories, skipping paths that do
// not exist when skipMissing (else such a path is an error that
// errors.Is(err, fs.ErrNotExist)). A document that is not a
// CustomResourceDefinition is an error naming its file.
func Read(paths []string, skipMissing bool) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil && skipMissing && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		files, err := manifests.Files(p)
		if err != nil {
			return nil, fmt.Errorf("envtest: CRD path: %w", err)
		}
		for _, f := range files {
			docs, err := manifests.Documents(f)
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

// Install creates or updates crds, waits until each is served (poll 0
// means every 50 ms) and returns the names of those it created (not
// updated).
func Install(ctx context.Context, cfg *rest.Config, crds []*unstructured.Unstructured, poll time.Duration) (created []string, err error) {
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

// Uninstall deletes the CRDs named; one already gone is not an error.
func Uninstall(ctx context.Context, cfg *rest.Config, names []string) error {
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
