package file_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/multicluster/providers/file"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/providertest"
)

const interval = 2 * time.Second

// kubeconfig returns a kubeconfig with one context per host, the first
// (in name order) current.
func kubeconfig(t *testing.T, hosts map[string]string) []byte {
	t.Helper()
	cfgs := make(map[string]*rest.Config, len(hosts))
	current := ""
	for name, host := range hosts {
		cfgs[name] = &rest.Config{Host: host, BearerToken: "t"}
		if current == "" || name < current {
			current = name
		}
	}
	data, err := providertest.Kubeconfig(cfgs, current)
	require.NoError(t, err)
	return data
}

// write writes data to path atomically, as the package doc asks.
func write(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(filepath.Dir(path)), filepath.Base(path)+".tmp")
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// poll lets the provider read the files once more.
func poll() {
	time.Sleep(interval)
	synctest.Wait()
}

func hosts(r *providertest.Recorder) map[string]string {
	out := map[string]string{}
	for name, cfg := range r.Current() {
		out[name] = cfg.Host
	}
	return out
}

func TestDirectoryFilesEngageReengageAndDisengage(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "clusters")
	require.NoError(t, os.Mkdir(dir, 0o700))
	synctest.Test(t, func(t *testing.T) {
		write(t, filepath.Join(dir, "eu-1.yaml"), kubeconfig(t, map[string]string{"x": "https://eu-1"}))
		write(t, filepath.Join(dir, "us-1.kubeconfig"), kubeconfig(t, map[string]string{"y": "https://us-1"}))
		write(t, filepath.Join(dir, ".hidden"), kubeconfig(t, map[string]string{"z": "https://hidden"}))
		require.NoError(t, os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o700))

		rec := providertest.NewRecorder()
		var logs providertest.Logs
		p, err := file.New(file.Options{Dirs: []string{dir}, Interval: interval, Logger: logs.Logger()})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() { done <- p.Run(ctx, rec) }()
		synctest.Wait()
		assert.Equal(t, map[string]string{"eu-1": "https://eu-1", "us-1": "https://us-1"}, hosts(rec))

		// Changed bytes re-engage; the same bytes rewritten do not.
		events := len(rec.Events())
		write(t, filepath.Join(dir, "eu-1.yaml"), kubeconfig(t, map[string]string{"x": "https://eu-1b"}))
		write(t, filepath.Join(dir, "us-1.kubeconfig"), kubeconfig(t, map[string]string{"y": "https://us-1"}))
		poll()
		assert.Equal(t, []providertest.Event{
			{Op: "end", Name: "eu-1", Host: "https://eu-1"},
			{Op: "engage", Name: "eu-1", Host: "https://eu-1b"},
		}, rec.Events()[events:])

		// A broken file is logged once, engaged when fixed.
		write(t, filepath.Join(dir, "ap-1.yml"), []byte("not: [a kubeconfig"))
		poll()
		poll()
		assert.Equal(t, 1, logs.Count("file "+filepath.Join(dir, "ap-1.yml"), "the kubeconfig does not parse"), logs.String())
		assert.NotContains(t, hosts(rec), "ap-1")
		write(t, filepath.Join(dir, "ap-1.yml"), kubeconfig(t, map[string]string{"w": "https://ap-1"}))
		poll()
		assert.Equal(t, "https://ap-1", hosts(rec)["ap-1"])

		// Removed: disengaged.
		require.NoError(t, os.Remove(filepath.Join(dir, "us-1.kubeconfig")))
		poll()
		assert.Equal(t, []string{"ap-1", "eu-1"}, rec.Names())

		cancel()
		require.NoError(t, <-done)
		synctest.Wait()
		assert.Empty(t, rec.Names(), "every engagement ended with Run")
		assert.Empty(t, rec.Violations())
	})
}

func TestFileContextsAndMissingFile(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "fleet", "kubeconfig")
	require.NoError(t, os.Mkdir(filepath.Dir(path), 0o700))
	synctest.Test(t, func(t *testing.T) {
		rec := providertest.NewRecorder()
		var logs providertest.Logs
		p, err := file.New(file.Options{Files: []string{path}, Interval: interval, Logger: logs.Logger()})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() { _ = p.Run(ctx, rec) }()
		synctest.Wait()
		poll()
		assert.Empty(t, rec.Names())
		assert.Equal(t, 1, logs.Count(`"path"="`+path+`"`, "no such file"), logs.String())

		write(t, path, kubeconfig(t, map[string]string{"eu-1": "https://eu-1", "us-1": "https://us-1"}))
		poll()
		assert.Equal(t, map[string]string{"eu-1": "https://eu-1", "us-1": "https://us-1"}, hosts(rec))

		// A context removed: that cluster leaves; the file's bytes changed,
		// so the other is engaged again.
		write(t, path, kubeconfig(t, map[string]string{"eu-1": "https://eu-1"}))
		poll()
		assert.Equal(t, map[string]string{"eu-1": "https://eu-1"}, hosts(rec))

		require.NoError(t, os.Remove(path))
		poll()
		assert.Empty(t, rec.Names())
		assert.Equal(t, 2, logs.Count(`"path"="`+path+`"`, "no such file"), "logged again after it was fixed and broke again")
	})
}

func TestRelativePathsResolveAgainstTheFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "token"), []byte("secret-token"), 0o600))
	kc := "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: c, cluster: {server: https://c}}]\n" +
		"users: [{name: u, user: {tokenFile: token}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(kc), 0o600))
	synctest.Test(t, func(t *testing.T) {
		rec := providertest.NewRecorder()
		p, err := file.New(file.Options{Dirs: []string{dir}, Interval: interval})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() { _ = p.Run(ctx, rec) }()
		synctest.Wait()
		require.Contains(t, rec.Current(), "c")
		assert.Equal(t, filepath.Join(dir, "token"), rec.Current()["c"].BearerTokenFile)
	})
}

func TestNewValidates(t *testing.T) {
	_, err := file.New(file.Options{Interval: -time.Second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "set Options.Files or Options.Dirs")
	assert.Contains(t, err.Error(), "Options.Interval -1s is negative")
}
