package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	names, fieldsOf = map[string]bool{}, map[string]map[string]bool{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Errorf("the rules need kubeloop's package %s: %v", pkg, err)
		return names, fieldsOf
	}
	fset := token.NewFileSet()
	aliases := map[string]string{} // alias -> the generic type it instantiates, in this package
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
				if n.Assign.IsValid() { // type Options = TypedOptions[reconcile.Request]
					t := n.Type
					if ix, ok := t.(*ast.IndexExpr); ok {
						t = ix.X
					} else if ix, ok := t.(*ast.IndexListExpr); ok {
						t = ix.X
					}
					if id, ok := t.(*ast.Ident); ok {
						aliases[n.Name.Name] = id.Name
					}
				}
			}
			return true
		})
	}
	for alias, of := range aliases {
		if fs, ok := fieldsOf[of]; ok {
			fieldsOf[alias] = fs
		}
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
	// The zapcore rewrite's targets.
	zapNames, _ := exported(t, kl("log/zap"))
	assert.True(t, zapNames["LevelValue"], "zapcore.Level(n) rewrites to zap.LevelValue(n), which does not exist")
	for n := range zapcoreNames {
		assert.True(t, zapNames[n], "zapcore.%s rewrites to zap.%s, which does not exist", n, n)
	}
	// The names the contract gives the twins, which ported code uses
	// after the import path rewrite alone.
	for pkg, names := range map[string][]string{
		"log/zap":            {"Options", "Opts", "New", "UseFlagOptions", "UseDevMode", "WriteTo", "Level", "StacktraceLevel", "JSONEncoder", "ConsoleEncoder", "TimeEncoder", "LevelEnabler"},
		"metrics":            {"Registry"},
		"certwatcher":        {"New", "CertWatcher"},
		"config":             {"Controller"},
		"webhook/conversion": {"Hub", "Convertible"},
		"envtest/komega":     {"SetClient", "SetContext", "Get", "List", "Update", "UpdateStatus", "Object", "ObjectList", "EqualObject", "New", "Komega"},
		"handler":            {"TypedCreateEvent", "TypedUpdateEvent", "TypedDeleteEvent", "TypedGenericEvent", "TypedEventHandler", "TypedFuncs", "TypedEnqueueRequestForObject", "TypedEnqueueRequestForOwner", "TypedEnqueueRequestsFromMapFunc", "TypedMapFunc"},
		"handler/predicate":  {"TypedPredicate", "TypedFuncs", "NewTypedPredicateFuncs", "TypedGenerationChangedPredicate"},
		"controller/source":  {"TypedKind", "Channel", "TypedChannel"},
		"controller":         {"NewTyped", "TypedOptions"},
		"webhook":            {"Admission"},
		"webhook/admission":  {"Decoder", "NewDecoder"},
	} {
		have, _ := exported(t, kl(pkg))
		for _, n := range names {
			assert.True(t, have[n], "the tool leaves %s.%s to kubeloop's %s, which does not have it", pkg, n, kl(pkg))
		}
	}
	_, mgrTypes := exported(t, kl("manager"))
	assert.True(t, mgrTypes["Options"]["Controller"], "ctrl.Options{Controller: config.Controller{...}} is kept: manager.Options needs Controller")
	_, rsTypes := exported(t, kl("reconcile"))
	for _, f := range []string{"Requeue", "Priority"} {
		assert.True(t, rsTypes["Result"][f], "Result{%s: ...} is kept: reconcile.Result needs %s", f, f)
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
	_, icFields := exported(t, kl("client/interceptor"))
	for f := range fields[interceptorPkg+".Funcs"] {
		assert.False(t, icFields["Funcs"][f], "interceptor.Funcs now has %s: drop its field rule (rules.go) and rewrite its callbacks (interceptors.go)", f)
	}
	zapNames, zapTypes := exported(t, kl("log/zap"))
	for n, tg := range packages[crModule+"/pkg/log/zap"].members {
		if tg.note != "" {
			assert.False(t, zapNames[n], "kubeloop's log/zap now has %s: drop its note (rules.go)", n)
		}
	}
	for f := range fields[crModule+"/pkg/log/zap.Options"] {
		assert.False(t, zapTypes["Options"][f], "kubeloop's zap.Options now has %s: drop its field rule (rules.go)", f)
	}
	_, envFields := exported(t, kl("envtest"))
	for _, f := range []string{"DownloadBinaryAssets", "DownloadBinaryAssetsVersion", "DownloadBinaryAssetsIndexURL", "AttachControlPlaneOutput", "Scheme", "CRDInstallOptions", "ControlPlane"} {
		assert.True(t, envFields["Environment"][f], "envtest.Environment{%s: ...} is kept: kubeloop's Environment needs %s", f, f)
	}
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

// TestKubeloopRequirements keeps klRequires equal to kubeloop's go.mod.
func TestKubeloopRequirements(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	want := map[string]string{}
	inBlock := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.SplitN(line, "//", 2)[0])
		switch {
		case len(f) == 2 && f[0] == "require" && f[1] == "(":
			inBlock = true
		case inBlock && len(f) == 1 && f[0] == ")":
			inBlock = false
		case inBlock && len(f) == 2:
			want[f[0]] = f[1]
		case len(f) == 3 && f[0] == "require":
			want[f[1]] = f[2]
		}
	}
	require.NotEmpty(t, want)
	if !assert.Equal(t, want, klRequires, "requirements.go is out of date") {
		var list strings.Builder
		for _, m := range slices.Sorted(maps.Keys(want)) {
			fmt.Fprintf(&list, "\t%q: %q,\n", m, want[m])
		}
		t.Logf("klRequires in requirements.go should be:\n%s", list.String())
	}
}

// TestNotesNameWhatKubeloopLacks fails when kubeloop gains a name that a
// member note or a field note still calls missing: a note must not tell
// users to change code that now compiles.
func TestNotesNameWhatKubeloopLacks(t *testing.T) {
	// Names kubeloop has with another shape, so the note stays.
	differs := map[string]bool{
		kl("manager") + ".Options.LeaseDuration": true, kl("manager") + ".Options.RenewDeadline": true, // time.Duration, not a pointer
		kl("manager") + ".Options.RetryPeriod": true, kl("manager") + ".Options.GracefulShutdownTimeout": true,
	}
	for cr, rule := range packages {
		if rule.to == "" {
			continue
		}
		names, _ := exported(t, rule.to)
		for name, tg := range rule.members {
			if tg.path == "" && tg.note != "" {
				assert.False(t, names[name] && !differs[rule.to+"."+name], "%s.%s has a note, but kubeloop's %s has %s now: drop the note (rules.go)", cr, name, rule.to, name)
			}
		}
	}
	for key, rules := range fields {
		crPkg, typ, _ := strings.Cut(key[strings.LastIndex(key, "/")+1:], ".")
		crPath := key[:strings.LastIndex(key, "/")+1] + crPkg
		if !strings.Contains(key, "/") { // the ctrl alias package: crModule.Options
			crPath, typ, _ = strings.Cut(key, ".")
		}
		klPath := packages[crPath].to
		klType := typ
		if crPath == crModule {
			klPath = ctrlMembers[typ].path
		}
		if klPath == "" {
			continue
		}
		_, fieldsOf := exported(t, klPath)
		for field, fr := range rules {
			if fr.rename != "" {
				continue
			}
			assert.False(t, fieldsOf[klType][field] && !differs[klPath+"."+klType+"."+field],
				"%s{%s} has a field rule (drop or note), but kubeloop's %s.%s has %s now: drop the rule (rules.go)", key, field, klPath, klType, field)
		}
	}
}
