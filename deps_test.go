package kubeloop_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/kubeloop/kubeloop"

// layers is ARCHITECTURE.md's dependency direction, bottom to top. A
// package may import packages of lower layers, and packages of its own
// layer that share its first path element (client and client/apiutil).
var layers = []struct {
	layer    int
	prefixes []string
}{
	{0, []string{"workqueue", "reconcile", "scheme", "log", "config", "metrics", "certwatcher", "trace", "internal/kinds", "internal/faultproxy", "internal/logfilter", "internal/lease", "internal/probe"}},
	{1, []string{"client"}},
	{2, []string{"controller/controllerutil", "internal/metrics"}},
	{3, []string{"cache"}},
	{4, []string{"handler"}},
	{5, []string{"controller"}},
	{6, []string{"leaderelection", "webhook"}},
	{7, []string{"sharding"}},
	{8, []string{"multicluster"}},
	{9, []string{"manager"}},
	// internal/testenv is imported only by tests (TestMain's control plane
	// and leak check), so it may import envtest and goleak like examples.
	{examplesLayer, []string{"examples", "internal/reliability", "internal/testenv"}},
}

// examplesLayer is the top: examples may import anything, envtest too.
const examplesLayer = 10

// allowedModules are the only modules library code may import
// (ARCHITECTURE.md, plus what client-go itself brings and the README names).
var allowedModules = []string{
	"k8s.io/api/", "k8s.io/apimachinery/", "k8s.io/client-go/", "k8s.io/utils/", "k8s.io/klog/v2",
	"github.com/go-logr/logr", "github.com/prometheus/client_golang/", "github.com/prometheus/client_model/",
	"gopkg.in/evanphx/json-patch.v4", "sigs.k8s.io/structured-merge-diff/", "sigs.k8s.io/yaml",
}

// layerOf returns the layer of a package path relative to the module, the
// matched prefix, and whether it is known.
func layerOf(rel string) (int, string, bool) {
	best, bestPrefix := -1, ""
	for _, l := range layers {
		for _, p := range l.prefixes {
			if (rel == p || strings.HasPrefix(rel, p+"/")) && len(p) > len(bestPrefix) {
				best, bestPrefix = l.layer, p
			}
		}
	}
	return best, bestPrefix, best >= 0
}

func family(rel string) string { return strings.SplitN(rel, "/", 2)[0] }

func TestDependencyDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, "|")
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		if strings.HasPrefix(rel, "cmd/") {
			// Commands (cmd/kubeloop-migrate) use only the standard
			// library, and nothing imports them.
			for _, imp := range splitImports(imports) {
				if strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
					t.Errorf("%s imports %s: a command uses only the standard library", pkg, imp)
				}
			}
			continue
		}
		if rel == "envtest/komega" {
			// komega is envtest's helper for Gomega assertions through a
			// client: it stands beside the layers and may use the client.
			for _, imp := range splitImports(imports) {
				if impRel, ok := strings.CutPrefix(imp, module+"/"); ok && impRel != "client" && !strings.HasPrefix(impRel, "internal/kinds") {
					t.Errorf("%s imports %s: komega may use only the client of the library", pkg, imp)
				}
			}
			continue
		}
		if rel == "" || strings.HasPrefix(rel, "envtest") {
			// The root holds only this test; envtest stands beside the
			// layers and may import only the standard library, client-go
			// and its own internal packages.
			for _, imp := range splitImports(imports) {
				if strings.HasPrefix(imp, module+"/") && !strings.HasPrefix(imp, module+"/envtest/internal/") {
					t.Errorf("%s imports %s: envtest must not depend on the library", pkg, imp)
				}
			}
			continue
		}
		layer, _, ok := layerOf(rel)
		if !ok {
			t.Errorf("package %s is not in the layer table of deps_test.go; add it where ARCHITECTURE.md puts it", pkg)
			continue
		}
		for _, imp := range splitImports(imports) {
			checked++
			if !strings.HasPrefix(imp, module+"/") {
				if strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") && !allowedModule(imp) && layer < examplesLayer {
					t.Errorf("%s imports %s, a module ARCHITECTURE.md does not allow in the library", pkg, imp)
				}
				continue
			}
			impRel := strings.TrimPrefix(imp, module+"/")
			if strings.HasPrefix(impRel, "envtest") {
				if layer < examplesLayer {
					t.Errorf("%s imports envtest: only tests and examples may", pkg)
				}
				continue
			}
			impLayer, _, ok := layerOf(impRel)
			if !ok {
				t.Errorf("%s imports %s, which is not in the layer table", pkg, imp)
				continue
			}
			if impLayer > layer || (impLayer == layer && family(impRel) != family(rel)) {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports only go downward (ARCHITECTURE.md)", pkg, layer, imp, impLayer)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no imports checked: go list returned nothing useful")
	}
}

func splitImports(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func allowedModule(imp string) bool {
	for _, m := range allowedModules {
		if strings.HasPrefix(imp, m) || imp == strings.TrimSuffix(m, "/") {
			return true
		}
	}
	return false
}
