package main

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/*.golden")

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	require.NoError(t, err)
}

// migrate runs the command on dir and returns its output.
func migrate(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	require.Equal(t, 0, code, "kubeloop-migrate %v: %s", args, stderr.String())
	return stdout.String() + stderr.String()
}

// goCmd runs the go command in dir with the fixture's environment.
func goCmd(t *testing.T, dir string, timeout time.Duration, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	cmd.WaitDelay = time.Second
	timer := time.AfterFunc(timeout, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go %s in %s:\n%s", strings.Join(args, " "), dir, out)
	return string(out)
}

// TestKubebuilderFixtureEndToEnd migrates the kubebuilder-shaped project,
// then builds, vets and tests it against this checkout of kubeloop: its
// Ginkgo suite starts kubeloop's envtest (the binaries of `make tools`)
// and reconciles a Guestbook with a finalizer, an owned ConfigMap, a
// status update and events. The fixture's own dependencies (Ginkgo,
// Gomega, controller-runtime's zap package) come from the Go module proxy.
func TestKubebuilderFixtureEndToEnd(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the kubeloop module root is two directories up")

	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "kubebuilder"), dir)

	out := migrate(t, dir)
	assert.Contains(t, out, "kubeloop-migrate: 7 files changed")
	assert.Contains(t, out, "require github.com/kubeloop/kubeloop "+defaultVersion)
	for _, kind := range []string{kindCtrl, kindRecorder, kindMetrics, kindWebhook, kindLogger} {
		assert.Contains(t, out, "  "+kind+" ", "the summary counts %s rewrites", kind)
	}
	assert.Contains(t, out, "manual items: 3")

	second := migrate(t, dir)
	assert.Contains(t, second, "kubeloop-migrate: 0 files changed", "a second run changes nothing")
	assert.Contains(t, second, "manual items: 3", "and still lists the manual items")

	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	mod = append(mod, []byte("\nreplace github.com/kubeloop/kubeloop => "+root+"\n")...)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), mod, 0o644))

	cmd := exec.Command("go", "mod", "download")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the fixture needs Ginkgo, Gomega and controller-runtime's zap package from the Go module proxy (GOPROXY=%s), "+
			"and `go mod download` failed: %v\n%s", os.Getenv("GOPROXY"), err, b)
	}
	goCmd(t, dir, 3*time.Minute, "build", "./...")
	goCmd(t, dir, 3*time.Minute, "vet", "./...")
	test := goCmd(t, dir, 3*time.Minute, "test", "-count=1", "./...")
	assert.Contains(t, test, "ok  \texample.com/guestbook/internal/controller")
	assert.Contains(t, test, "ok  \texample.com/guestbook/internal/webhook/v1")
}

// TestOperatorSDKGolden migrates the operator-sdk-shaped main.go and
// compares the result with testdata/operator-sdk.golden (go test -update
// rewrites it).
func TestOperatorSDKGolden(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "operator-sdk"), dir)
	out := migrate(t, dir)
	assert.Contains(t, out, "manual items: 7")

	for _, name := range []string{"main.go", "go.mod"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		golden := filepath.Join("testdata", "operator-sdk.golden", name+".golden")
		if *update {
			require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
			require.NoError(t, os.WriteFile(golden, got, 0o644))
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), name)
	}
	assert.Contains(t, migrate(t, dir), "0 files changed")
}

func TestDryRunPrintsADiffAndWritesNothing(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "operator-sdk"), dir)
	before, err := os.ReadFile(filepath.Join(dir, "main.go"))
	require.NoError(t, err)

	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-dry-run", "-version", "v0.9.0", dir}, &stdout, &stderr), stderr.String())

	after, err := os.ReadFile(filepath.Join(dir, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "-dry-run writes nothing")
	assert.Contains(t, stdout.String(), "--- a/main.go\n+++ b/main.go\n")
	assert.Contains(t, stdout.String(), "\n-\tctrl \"sigs.k8s.io/controller-runtime\"\n")
	assert.Contains(t, stdout.String(), "\n+\tgithub.com/kubeloop/kubeloop v0.9.0\n")
	assert.Contains(t, stderr.String(), "2 files would change")
}

func TestRunRejectsADirectoryWithoutGoMod(t *testing.T) {
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 1, run([]string{t.TempDir()}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "is not a module root")
}
