package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exported reads a kubeloop package's non-test sources and returns its
// top-level names and, per struct type, its field names.
func exported(t *testing.T, pkg string) (names map[string]bool, fieldsOf map[string]map[string]bool) {
	t.Helper()
	dir := filepath.Join("..", "..", filepath.FromSlash(strings.TrimPrefix(pkg, klModule+"/")))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err, pkg)
	names, fieldsOf = map[string]bool{}, map[string]map[string]bool{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Recv == nil {
					names[n.Name.Name] = true
				}
				return false
			case *ast.ValueSpec:
				for _, id := range n.Names {
					names[id.Name] = true
				}
			case *ast.TypeSpec:
				names[n.Name.Name] = true
				if st, ok := n.Type.(*ast.StructType); ok {
					fs := map[string]bool{}
					for _, fld := range st.Fields.List {
						for _, id := range fld.Names {
							fs[id.Name] = true
						}
					}
					fieldsOf[n.Name.Name] = fs
				}
			}
			return true
		})
	}
	return names, fieldsOf
}

// TestRuleTargetsExist keeps the rules honest: every kubeloop package and
// name they rewrite to exists in this checkout.
func TestRuleTargetsExist(t *testing.T) {
	for cr, rule := range packages {
		if rule.to != "" {
			exported(t, rule.to)
		}
		for name, tg := range rule.members {
			if !strings.HasPrefix(tg.path, klModule) {
				continue
			}
			if tg.name == "" {
				tg.name = name
			}
			names, _ := exported(t, tg.path)
			assert.True(t, names[tg.name], "%s.%s rewrites to %s.%s, which does not exist", cr, name, tg.path, tg.name)
		}
	}
	ctrlFields := map[string]string{crModule + "/pkg/controller.Options": kl("controller") + ".Options"}
	for key, target := range ctrlFields {
		pkg, typ, _ := strings.Cut(target, ".Options")
		_, fieldsOf := exported(t, pkg)
		for field, fr := range fields[key] {
			if fr.rename != "" {
				assert.True(t, fieldsOf["Options"+typ][fr.rename], "%s.%s renames to %s, which %s lacks", key, field, fr.rename, target)
			}
		}
	}
}

// TestNotYetInKubeloop fails when kubeloop gains a name the rules still
// call missing, so that the rule is turned into a rewrite.
func TestNotYetInKubeloop(t *testing.T) {
	clientNames, _ := exported(t, kl("client"))
	for _, n := range []string{"NewNamespacedClient", "WithFieldOwner", "NewDryRunClient", "WithWatch"} {
		assert.True(t, clientNames[n], "pkg/client's %s keeps its name in kubeloop's client", n)
	}
	for _, n := range []string{"NewNamespacedClient", "WithFieldOwner", "NewDryRunClient"} {
		assert.NotContains(t, clientMembers, n, "kubeloop's client has %s with controller-runtime's signature: no member rule (rules.go)", n)
	}
	for n, tg := range clientMembers {
		if strings.HasPrefix(tg.note, "not ") {
			assert.False(t, clientNames[n], "kubeloop's client now has %s: drop or rewrite pkg/client's %s rule (rules.go)", n, n)
		}
	}
	_, envFields := exported(t, kl("envtest"))
	for _, f := range []string{"ErrorIfCRDPathMissing", "UseExistingCluster", "WebhookInstallOptions", "CRDDirectoryPaths", "BinaryAssetsDirectory"} {
		assert.True(t, envFields["Environment"][f], "envtest.Environment.%s keeps controller-runtime's name (no field rule)", f)
		assert.NotContains(t, fields[crModule+"/pkg/envtest.Environment"], f)
	}
	for f, fr := range fields[crModule+"/pkg/envtest.Environment"] {
		if !fr.drop && !strings.Contains(fr.note, "not in kubeloop") {
			continue // a field kubeloop has with another type: the note stays
		}
		assert.False(t, envFields["Environment"][f], "envtest.Environment now has %s: drop its field rule (rules.go) so the field is kept", f)
	}
	_, mgrFields := exported(t, kl("manager"))
	for _, f := range []string{"BindAddress", "SecureServing", "TLSOpts", "FilterProvider", "ExtraHandlers"} {
		assert.True(t, mgrFields["MetricsOptions"][f], "metricsserver.Options.%s keeps its name in manager.MetricsOptions", f)
	}
}

func TestGoVersionMatchesKubeloop(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "\ngo "+klGoVersion+"\n")
}
