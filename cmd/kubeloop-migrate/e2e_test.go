package main

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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
	return goCmdEnv(t, dir, timeout, nil, args...)
}

// goCmdEnv is goCmd with env (KEY=value) added to the environment.
func goCmdEnv(t *testing.T, dir string, timeout time.Duration, env []string, args ...string) string {
	t.Helper()
	out, err := goRun(dir, timeout, env, args...)
	require.NoError(t, err, "go %s in %s:\n%s", strings.Join(args, " "), dir, out)
	return out
}

// goRun runs the go command in dir and returns its combined output.
func goRun(dir string, timeout time.Duration, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off"), env...)
	cmd.WaitDelay = time.Second
	timer := time.AfterFunc(timeout, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// fixture is a project under testdata that kubeloop-migrate ports with no
// hand edits: after the run it builds, vets and passes its own tests
// against this checkout of kubeloop.
type fixture struct {
	dir     string   // under testdata
	summary []string // in the tool's output
	passed  []string // packages whose tests must pass
	check   func(t *testing.T, out string)
}

// fixtures are the projects in the shape of real ones. The kubebuilder-
// cronjob, operator-sdk-memcached and patterns modules were written
// against controller-runtime v0.23.3 and pass their own tests against it
// before migration (with KUBEBUILDER_ASSETS set); kubebuilder is the
// guestbook on v0.25.2.
var fixtures = []fixture{
	{
		dir: "kubebuilder",
		summary: []string{
			"kubeloop-migrate: 7 files changed",
			"manual items: 0",
			"  " + kindCtrl + " ", "  " + kindRecorder + " ", "  " + kindMetrics + " ", "  " + kindWebhook + " ", "  " + kindLogger + " ",
		},
		passed: []string{"example.com/guestbook/internal/controller", "example.com/guestbook/internal/webhook/v1"},
	},
	{
		dir:     "kubebuilder-cronjob",
		summary: []string{"manual items: 0", "  " + kindWebhook + " ", "  " + kindMetrics + " "},
		passed:  []string{"tutorial.kubebuilder.io/project/internal/controller", "tutorial.kubebuilder.io/project/internal/webhook/v1"},
	},
	{
		dir:     "operator-sdk-memcached",
		summary: []string{"manual items: 0", "  " + kindRecorder + " "},
		passed:  []string{"github.com/example/memcached-operator/internal/controller"},
	},
	{
		dir:     "patterns",
		summary: []string{"manual items: 0", "  " + kindInterceptor + " ", "go.mod: require " + zaprawModule + " " + defaultVersion},
		passed: []string{
			"example.com/patterns/admissionhandler",
			"example.com/patterns/apiwarnings",
			"example.com/patterns/cacheopts",
			"example.com/patterns/conversion/v2",
			"example.com/patterns/customwebhook",
			"example.com/patterns/envtestassets",
			"example.com/patterns/envtestusers",
			"example.com/patterns/fakebuilder",
			"example.com/patterns/fakecluster",
			"example.com/patterns/interceptorfake",
			"example.com/patterns/komegapat",
			"example.com/patterns/managercontroller",
			"example.com/patterns/metadatawatch",
			"example.com/patterns/metricsscrape",
			"example.com/patterns/ownerref",
			"example.com/patterns/requeue",
			"example.com/patterns/stagingdeps",
			"example.com/patterns/typed",
			"example.com/patterns/watchnamespaces",
			"example.com/patterns/webhookserver",
			"example.com/patterns/zapencoder",
			"example.com/patterns/zaplog",
			"example.com/patterns/zapraw",
		},
	},
}

// kubebuilderAssets is the directory with etcd and kube-apiserver for the
// fixtures' envtest suites, as a kubebuilder Makefile passes it
// (KUBEBUILDER_ASSETS="$(setup-envtest use -p path)"): $KUBEBUILDER_ASSETS
// if set, else the newest pair `make tools` built.
func kubebuilderAssets(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	root := os.Getenv("KUBELOOP_TOOLS_DIR")
	if root == "" {
		cache, err := os.UserCacheDir()
		require.NoError(t, err)
		root = filepath.Join(cache, "kubeloop", "tools")
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "kube-apiserver-*_etcd-*"))
	require.NotEmpty(t, dirs, "no control-plane binaries under %s: run `make tools` or set KUBEBUILDER_ASSETS", root)
	sort.Strings(dirs)
	return dirs[len(dirs)-1]
}

// TestFixturesEndToEnd migrates each fixture in a copy, runs the tool a
// second time (it changes nothing), points go.mod at this checkout with a
// replace directive (the only edit, as the tool's summary says to; a
// second one for kubeloop's log/zap/zapraw module where the tool required
// it), and
// builds, vets and tests the result. controller-runtime must be gone from
// go.mod. The fixtures' own dependencies (Ginkgo, Gomega, robfig/cron,
// go.uber.org/zap) come from the Go module proxy or the module cache.
func TestFixturesEndToEnd(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the kubeloop module root is two directories up")
	assets := kubebuilderAssets(t)

	for _, fx := range fixtures {
		t.Run(fx.dir, func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, filepath.Join("testdata", fx.dir), dir)

			out := migrate(t, dir)
			assert.Contains(t, out, "require github.com/kubeloop/kubeloop "+defaultVersion)
			for _, want := range fx.summary {
				assert.Contains(t, out, want, "the summary says %q", want)
			}
			if fx.check != nil {
				fx.check(t, out)
			}
			second := migrate(t, dir)
			assert.Contains(t, second, "kubeloop-migrate: 0 files changed", "a second run changes nothing")

			mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			require.NoError(t, err)
			assert.NotContains(t, string(mod), "sigs.k8s.io/controller-runtime", "the tool drops controller-runtime from go.mod")
			mod = append(mod, []byte("\nreplace github.com/kubeloop/kubeloop => "+root+"\n")...)
			if strings.Contains(string(mod), zaprawModule+" ") {
				mod = append(mod, []byte("replace "+zaprawModule+" => "+filepath.Join(root, "log", "zap", "zapraw")+"\n")...)
			}
			require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), mod, 0o644))

			goCmd(t, dir, 3*time.Minute, "mod", "tidy")
			tidied, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			require.NoError(t, err)
			assert.NotContains(t, string(tidied), "sigs.k8s.io/controller-runtime", "nothing pulls controller-runtime back in")

			// Not fatal: a package that does not build still lets the
			// others show whether they pass.
			for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}} {
				out, err := goRun(dir, 3*time.Minute, nil, args...)
				assert.NoError(t, err, "go %s in %s:\n%s", strings.Join(args, " "), dir, out)
			}
			test, err := goRun(dir, 4*time.Minute, []string{"KUBEBUILDER_ASSETS=" + assets}, "test", "-count=1", "./...")
			assert.NoError(t, err, "go test ./... in %s:\n%s", dir, test)
			for _, pkg := range fx.passed {
				assert.Contains(t, test, "ok  \t"+pkg+"\t", "the tests of %s pass", pkg)
			}
		})
	}
}

// snapshot is every file under dir, by relative path.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(b)
		return err
	})
	require.NoError(t, err)
	return files
}

func TestFixtureWithoutControllerRuntimeIsLeftAlone(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "no-controller-runtime"), dir)
	before := snapshot(t, dir)
	require.Contains(t, before, "go.mod")
	require.Contains(t, before, "go.sum")

	out := migrate(t, dir)
	assert.Contains(t, out, "0 files changed")
	assert.Equal(t, before, snapshot(t, dir), "every file, go.mod and go.sum included, is byte-for-byte the same")
	goCmd(t, dir, 2*time.Minute, "test", "-count=1", "./...")
}

func TestFixtureWithASyntaxErrorWritesNothing(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "syntax-error"), dir)
	// Stored as .go.txt so that gofmt and go vet over the repository pass.
	broken := filepath.Join(dir, "internal", "broken", "broken.go")
	require.NoError(t, os.Rename(broken+".txt", broken))
	before := snapshot(t, dir)

	var stdout, stderr bytes.Buffer
	code := run([]string{dir}, &stdout, &stderr)
	assert.NotEqual(t, 0, code, "the run fails: %s%s", stdout.String(), stderr.String())
	assert.Regexp(t, `internal/broken/broken\.go:\d+:\d+`, stderr.String(), "the error names the file and the position")
	assert.Equal(t, before, snapshot(t, dir), "nothing is written, not even the package that parses (api/) or go.mod")
}

// TestOperatorSDKGolden migrates the operator-sdk-shaped main.go and
// compares the result with testdata/operator-sdk.golden (go test -update
// rewrites it).
func TestOperatorSDKGolden(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, filepath.Join("testdata", "operator-sdk"), dir)
	out := migrate(t, dir)
	assert.Contains(t, out, "manual items: 4")

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
