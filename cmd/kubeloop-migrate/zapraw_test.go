package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUsesZapTypes(t *testing.T) {
	for _, tc := range []struct {
		name string
		give string // the file's body, after its imports of crzap, uberzap and zapcore
		want bool
	}{
		{name: "NewRaw", give: `var l = crzap.NewRaw()`, want: true},
		{name: "RawZapOpts", give: `var o = crzap.RawZapOpts()`, want: true},
		{name: "Encoder option", give: `var o = crzap.Encoder(nil)`, want: true},
		{name: "KubeAwareEncoder", give: `var e crzap.KubeAwareEncoder`, want: true},
		{name: "ZapOpts set", give: `func f(o *crzap.Options) { o.ZapOpts = nil }`, want: true},
		{name: "NewEncoder set", give: `func f(o *crzap.Options) { o.NewEncoder = nil }`, want: true},
		{name: "Encoder in a literal", give: `var o = crzap.Options{Encoder: nil}`, want: true},
		{name: "go.uber.org/zap used", give: `var l = crzap.Level(uberzap.NewAtomicLevelAt(0))`, want: true},
		{name: "the scaffold's calls", give: `var l = crzap.New(crzap.UseDevMode(true), crzap.JSONEncoder())`},
		{name: "zapcore's levels and time encoders", give: `var o = crzap.Options{Level: zapcore.Level(-2), TimeEncoder: zapcore.ISO8601TimeEncoder}`},
		{name: "EncoderConfig options", give: `var o = crzap.ConsoleEncoder(func(c *zapcore.EncoderConfig) { c.EncodeTime = zapcore.ISO8601TimeEncoder })`},
		{name: "a local named like the package", give: `func f() { crzap := struct{ NewRaw int }{}; _ = crzap.NewRaw }`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "package x\n\nimport (\n\tuberzap \"go.uber.org/zap\"\n\t\"go.uber.org/zap/zapcore\"\n\tcrzap \"sigs.k8s.io/controller-runtime/pkg/log/zap\"\n)\n\n" +
				"var _ = uberzap.L\nvar _ zapcore.Level\n\n" + tc.give + "\n"
			if !tc.want {
				src = "package x\n\nimport (\n\t\"go.uber.org/zap/zapcore\"\n\tcrzap \"sigs.k8s.io/controller-runtime/pkg/log/zap\"\n)\n\nvar _ zapcore.Level\n\n" + tc.give + "\n"
			}
			f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
			require.NoError(t, err)
			assert.Equal(t, tc.want, usesZapTypes(f))
		})
	}
}

func TestGoUberZapAloneNeedsNoZapraw(t *testing.T) {
	// uberzap alone (used above in the "want" bodies) takes a file to
	// zapraw; without controller-runtime's zap there is nothing to do.
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\n\nimport \"go.uber.org/zap\"\n\nvar l = zap.NewNop()\n", 0)
	require.NoError(t, err)
	assert.False(t, usesZapTypes(f))
}

// TestZaprawModule ports a module shaped as clickhouse-operator's: main.go
// builds a *zap.Logger with NewRaw from the scaffold's flags, and a test
// file of another package uses only zap.New, beside a file of its own
// package that uses NewRaw. Every file of a package that uses a zap-typed
// name goes to zapraw; the others stay on log/zap; go.mod requires both
// modules and the summary says how to replace both.
func TestZaprawModule(t *testing.T) {
	files := map[string]string{
		"go.mod": "module example.com/ch\n\ngo 1.26.0\n\nrequire (\n\tgo.uber.org/zap v1.27.0\n\tsigs.k8s.io/controller-runtime v0.23.1\n)\n",
		"cmd/main.go": `package main

import (
	"flag"

	"github.com/go-logr/zapr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	opts := zap.Options{Development: true}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	logger := zap.NewRaw(zap.UseFlagOptions(&opts))
	ctrl.SetLogger(zapr.NewLogger(logger))
}
`,
		"internal/keeper/sync_test.go": `package keeper

import "sigs.k8s.io/controller-runtime/pkg/log/zap"

var raw = zap.NewRaw(zap.UseDevMode(true))
`,
		"internal/keeper/suite_test.go": `package keeper

import "sigs.k8s.io/controller-runtime/pkg/log/zap"

var logger = zap.New(zap.UseDevMode(true))
`,
		"internal/other/suite_test.go": `package other

import "sigs.k8s.io/controller-runtime/pkg/log/zap"

var logger = zap.New(zap.UseDevMode(true))
`,
	}
	dir := writeModule(t, files)
	code, stdout, stderr := runTool(t, dir)
	require.Equal(t, 0, code, stderr)
	got := readModule(t, dir, files)

	const rawImport = `zap "github.com/kubeloop/kubeloop/log/zap/zapraw"`
	assert.Contains(t, got["cmd/main.go"], rawImport)
	assert.Contains(t, got["cmd/main.go"], "logger := zap.NewRaw(zap.UseFlagOptions(&opts))")
	assert.Contains(t, got["cmd/main.go"], "slog.SetDefault(slog.New(logr.ToSlogHandler(zapr.NewLogger(logger))))")
	assert.Contains(t, got["internal/keeper/sync_test.go"], rawImport)
	assert.Contains(t, got["internal/keeper/suite_test.go"], rawImport, "the whole package: its Options and loggers are one kind")
	assert.Contains(t, got["internal/other/suite_test.go"], `"github.com/kubeloop/kubeloop/log/zap"`, "a package without zap types stays on log/zap")
	for name, src := range got {
		assert.NotContains(t, src, "// kubeloop-migrate:", "no manual item in %s", name)
	}
	assert.Contains(t, stdout, "manual items: 0")

	assert.Contains(t, got["go.mod"], "\tgithub.com/kubeloop/kubeloop "+defaultVersion+"\n\tgithub.com/kubeloop/kubeloop/log/zap/zapraw "+defaultVersion+"\n")
	assert.Contains(t, stdout, "go.mod: require "+zaprawModule+" "+defaultVersion+"\n")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	assert.Contains(t, stdout, "  go mod edit -replace "+klModule+"="+root+"\n")
	assert.Contains(t, stdout, "  go mod edit -replace "+zaprawModule+"="+filepath.Join(root, "log", "zap", "zapraw")+"\n")

	_, again, stderr := runTool(t, dir)
	assert.Contains(t, again, "kubeloop-migrate: 0 files changed", stderr)
}

func TestRewriteGoModAddsZapraw(t *testing.T) {
	give := "module example.com/x\n\ngo 1.26.0\n\nrequire (\n\tk8s.io/api v0.37.2\n\tsigs.k8s.io/controller-runtime v0.25.2\n)\n"
	out, changes, _ := rewriteGoMod(give, goModEdit{version: "v1.2.3", crImported: true, zapRaw: true})
	assert.Equal(t, "module example.com/x\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/kubeloop/kubeloop v1.2.3\n\tgithub.com/kubeloop/kubeloop/log/zap/zapraw v1.2.3\n\tk8s.io/api v0.37.2\n)\n", out)
	assert.Contains(t, changes, "require "+zaprawModule+" v1.2.3")

	again, changes, _ := rewriteGoMod(out, goModEdit{version: "v1.2.3", crImported: true, zapRaw: true})
	assert.Equal(t, out, again, "idempotent")
	assert.Empty(t, changes)

	single, _, _ := rewriteGoMod("module m\n\ngo 1.26.0\n\nrequire sigs.k8s.io/controller-runtime v0.25.2\n", goModEdit{version: "v1.0.0", crImported: true, zapRaw: true})
	assert.Equal(t, "module m\n\ngo 1.26.0\n\nrequire github.com/kubeloop/kubeloop v1.0.0\n\nrequire github.com/kubeloop/kubeloop/log/zap/zapraw v1.0.0\n", single)
}

// TestZaprawModuleIsInTheRepo keeps zaprawModule the module that the
// checkout's log/zap/zapraw holds (checkoutHint's replace points there).
func TestZaprawModuleIsInTheRepo(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "log", "zap", "zapraw", "go.mod"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "module "+zaprawModule+"\n"), "go.mod starts with module %s", zaprawModule)
}
