package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeModule writes files (path -> content) under a new directory.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	return dir
}

// readModule reads back the files of writeModule.
func readModule(t *testing.T, dir string, files map[string]string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for p := range files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		require.NoError(t, err)
		got[p] = string(b)
	}
	return got
}

func runTool(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

const crMain = `package main

import ctrl "sigs.k8s.io/controller-runtime"

func main() { _ = ctrl.SetupSignalHandler() }
`

func TestModuleWithoutControllerRuntimeIsLeftAlone(t *testing.T) {
	recorder := `package x

import "k8s.io/client-go/tools/record"

type R struct{ Recorder record.EventRecorder }

func (r *R) f(o any) { r.Recorder.Event(nil, "Normal", "Done", "ok") }
`
	for _, tc := range []struct {
		name    string
		gomod   string
		wantMod string
		summary string
	}{
		{
			name:    "no import, no require",
			gomod:   "module example.com/x\n\ngo 1.22\n\nrequire k8s.io/client-go v0.30.0\n",
			wantMod: "module example.com/x\n\ngo 1.22\n\nrequire k8s.io/client-go v0.30.0\n",
			summary: "0 files changed",
		},
		{
			name:    "a require without imports loses only that line",
			gomod:   "module example.com/x\n\ngo 1.22\n\nrequire (\n\tk8s.io/client-go v0.30.0\n\tsigs.k8s.io/controller-runtime v0.20.0\n)\n",
			wantMod: "module example.com/x\n\ngo 1.22\n\nrequire (\n\tk8s.io/client-go v0.30.0\n)\n",
			summary: "go.mod: dropped sigs.k8s.io/controller-runtime (nothing imports it)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"go.mod": tc.gomod, "x.go": recorder}
			dir := writeModule(t, files)
			code, stdout, stderr := runTool(t, dir)
			require.Equal(t, 0, code, stderr)
			got := readModule(t, dir, files)
			assert.Equal(t, recorder, got["x.go"], "no .go file is touched")
			assert.Equal(t, tc.wantMod, got["go.mod"])
			assert.Contains(t, stdout, tc.summary)
			assert.NotContains(t, stdout, klModule)
		})
	}
}

func TestSyntaxErrorWritesNothing(t *testing.T) {
	files := map[string]string{
		"go.mod":      "module example.com/x\n\ngo 1.24.0\n\nrequire sigs.k8s.io/controller-runtime v0.21.0\n",
		"a/main.go":   crMain, // walked first: it would have been rewritten before the broken ones
		"b/broken.go": "package b\n\nfunc f( {\n",
		"c/ok.go":     "package c\n\nimport \"sigs.k8s.io/controller-runtime/pkg/client\"\n\nvar _ client.Client\n",
		"c/bad.go":    "package c\n\nvar x = \n",
	}
	dir := writeModule(t, files)
	code, stdout, stderr := runTool(t, dir)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "nothing was written: 2 files do not parse")
	assert.Contains(t, stderr, "b/broken.go:3:")
	assert.Contains(t, stderr, "c/bad.go:3:10: expected operand")
	assert.Equal(t, files, readModule(t, dir, files), "every file as it was")
}

func TestFailedWriteRestoresTheFilesWritten(t *testing.T) {
	files := map[string]string{
		"go.mod":    "module example.com/x\n\ngo 1.24.0\n\nrequire sigs.k8s.io/controller-runtime v0.21.0\n",
		"a/main.go": crMain,
		"b/b.go":    "package b\n\nimport \"sigs.k8s.io/controller-runtime/pkg/client\"\n\nvar _ client.Client\n",
	}
	dir := writeModule(t, files)
	calls := 0
	rename = func(from, to string) error {
		calls++
		if calls == 2 {
			return errors.New("disk full")
		}
		return os.Rename(from, to)
	}
	t.Cleanup(func() { rename = os.Rename })

	code, _, stderr := runTool(t, dir)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "disk full (the files written before it were restored)")
	assert.Equal(t, files, readModule(t, dir, files), "every file as it was")
	entries, err := os.ReadDir(filepath.Join(dir, "b"))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

func TestSummaryCountsUsesAndRaisedRequirements(t *testing.T) {
	var b strings.Builder
	b.WriteString("package main\n\nimport \"sigs.k8s.io/controller-runtime/pkg/client\"\n\nfunc main() {\n\tvar c client.Client\n")
	for i := 0; i < 5; i++ {
		b.WriteString("\t_ = client.WithFieldValidation(c, \"Strict\")\n")
	}
	b.WriteString("}\n")
	files := map[string]string{
		"go.mod": "module example.com/x\n\ngo 1.24.0\n\nrequire (\n\tgithub.com/prometheus/client_golang v1.19.1\n" +
			"\tk8s.io/client-go v0.33.0\n\tsigs.k8s.io/controller-runtime v0.21.0\n)\n",
		"main.go": b.String(),
	}
	for _, dryRun := range []bool{true, false} {
		dir := writeModule(t, files)
		args := []string{"-version", "v1.0.0", dir}
		if dryRun {
			args = append([]string{"-dry-run"}, args...)
		}
		code, stdout, stderr := runTool(t, args...)
		require.Equal(t, 0, code, stderr)
		summary := stdout
		if dryRun {
			summary = stderr
			assert.Contains(t, stdout, "-\tk8s.io/client-go v0.33.0\n")
			assert.Contains(t, stdout, "+\tk8s.io/client-go "+klRequires["k8s.io/client-go"]+"\n", "the diff shows the raise")
		}
		assert.Contains(t, summary, "go.mod: raised github.com/prometheus/client_golang v1.19.1 -> "+klRequires["github.com/prometheus/client_golang"]+"\n")
		assert.Contains(t, summary, "go.mod: raised k8s.io/client-go v0.33.0 -> "+klRequires["k8s.io/client-go"]+"\n")
		assert.Contains(t, summary, whyRaised+"\n")
		assert.Contains(t, summary, "manual items: 1 (comments starting \"// kubeloop-migrate: \"), for 5 uses\n")
		assert.Contains(t, summary, "main.go:7: client.WithFieldValidation: not in kubeloop: pass client.FieldValidation(...) to each write (5 uses in this file)\n")
		assert.NotContains(t, summary, "built from a checkout", "-version was given")
	}
}

func TestCheckoutBuildSaysHowToUseTheCheckout(t *testing.T) {
	files := map[string]string{
		"go.mod":  "module example.com/x\n\ngo 1.26.0\n\nrequire sigs.k8s.io/controller-runtime v0.23.0\n",
		"main.go": crMain,
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)

	dir := writeModule(t, files)
	code, stdout, stderr := runTool(t, dir) // a test binary is a checkout build
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "go.mod: require "+klModule+" "+defaultVersion+"\n")
	assert.Contains(t, stdout, "  go mod edit -replace "+klModule+"="+root+"\n")

	files["go.mod"] += "\nreplace " + klModule + " => " + root + "\n"
	dir = writeModule(t, files)
	code, stdout, stderr = runTool(t, dir)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "go.mod: require "+klModule+" "+defaultVersion+"\n")
	assert.NotContains(t, stdout, "go mod edit -replace", "the replace is there already")
}

func TestVersionOf(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "be93311217bd0000"}}
	for _, tc := range []struct {
		name         string
		give         debug.BuildInfo
		want         string
		fromCheckout bool
	}{
		{"go run @v1.2.3", debug.BuildInfo{Main: debug.Module{Path: klModule, Version: "v1.2.3"}}, "v1.2.3", false},
		{"go run @<commit>", debug.BuildInfo{Main: debug.Module{Path: klModule, Version: "v0.0.0-20260626114624-be93311217bd"}}, "v0.0.0-20260626114624-be93311217bd", false},
		{"a checkout at a tag", debug.BuildInfo{Main: debug.Module{Path: klModule, Version: "v1.2.3"}, Settings: vcs}, "v1.2.3", false},
		{"a checkout at a commit", debug.BuildInfo{Main: debug.Module{Path: klModule, Version: "v0.0.0-20260626114624-be93311217bd"}, Settings: vcs}, defaultVersion, true},
		{"a modified checkout", debug.BuildInfo{Main: debug.Module{Path: klModule, Version: "v0.0.0-20260626114624-be93311217bd+dirty"}, Settings: vcs}, defaultVersion, true},
		{"no version", debug.BuildInfo{Main: debug.Module{Path: klModule, Version: "(devel)"}}, defaultVersion, true},
		{"another main module", debug.BuildInfo{Main: debug.Module{Path: "example.com/x", Version: "v1.0.0"}}, defaultVersion, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, fromCheckout := versionOf(&tc.give)
			assert.Equal(t, tc.want, v)
			assert.Equal(t, tc.fromCheckout, fromCheckout)
		})
	}
}
