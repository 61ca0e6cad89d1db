package envtest_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeloop/kubeloop/envtest"
)

// TestControlPlaneConfigure runs a fake etcd that prints its flags, and
// checks that ControlPlane's flags, raw Args and output writer reach it.
func TestControlPlaneConfigure(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"etcd", "kube-apiserver"} {
		script := "#!/bin/sh\nfor a in \"$@\"; do echo \"arg $a\"; done\necho \"" + name + " stderr\" >&2\nexit 3\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755))
	}
	var out, errOut syncBuffer
	e := &envtest.Environment{
		BinaryAssetsDirectory:    dir,
		ControlPlaneStartTimeout: 5 * time.Second,
		ControlPlane: envtest.ControlPlane{Etcd: &envtest.Etcd{
			Path: filepath.Join(dir, "etcd"), Args: []string{"--raw=1"}, Out: &out, Err: &errOut,
		}},
	}
	e.ControlPlane.Etcd.Configure().Set("log-level", "debug").Disable("unsafe-no-fsync").Append("new-flag", "a", "b")
	_, err := e.Start()
	require.Error(t, err)
	require.NoError(t, e.Stop())
	assert.Contains(t, err.Error(), "etcd exited before it was ready")
	got := out.String()
	assert.Contains(t, got, "arg --log-level=debug\n")
	assert.NotContains(t, got, "log-level=warn", "Set replaces the Environment's value")
	assert.NotContains(t, got, "unsafe-no-fsync", "Disable removes the flag")
	assert.Contains(t, got, "arg --new-flag=a\narg --new-flag=b\narg --raw=1\n", "new flags, then raw Args, come last")
	assert.Contains(t, got, "arg --name=default\n", "untouched flags stay")
	assert.Equal(t, "etcd stderr\n", errOut.String(), "Err receives standard error")
}

func TestControlPlaneTimeoutFromEnv(t *testing.T) {
	t.Setenv(envtest.StartTimeoutEnv, "soon")
	_, err := (&envtest.Environment{}).Start()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `$KUBEBUILDER_CONTROLPLANE_START_TIMEOUT="soon" is not a duration`)
}

// syncBuffer is a bytes.Buffer safe for the process's copying goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestArguments(t *testing.T) {
	defaults := []string{"--a=1", "--b=2", "--b=3", "--c", "--d=4"}
	tests := []struct {
		name string
		give func(a *envtest.Arguments)
		want []string
	}{
		{name: "nothing changed", give: func(*envtest.Arguments) {}, want: defaults},
		{name: "Set replaces", give: func(a *envtest.Arguments) { a.Set("b", "9") },
			want: []string{"--a=1", "--b=9", "--c", "--d=4"}},
		{name: "Append keeps the defaults", give: func(a *envtest.Arguments) { a.Append("b", "9").Append("b", "10") },
			want: []string{"--a=1", "--b=2", "--b=3", "--b=9", "--b=10", "--c", "--d=4"}},
		{name: "AppendNoDefaults drops them", give: func(a *envtest.Arguments) { a.AppendNoDefaults("b", "9").AppendNoDefaults("b", "10") },
			want: []string{"--a=1", "--b=9", "--b=10", "--c", "--d=4"}},
		{name: "Disable removes, Enable passes the name", give: func(a *envtest.Arguments) { a.Disable("a").Enable("d") },
			want: []string{"--b=2", "--b=3", "--c", "--d"}},
		{name: "new keys come last in order, dashes ignored", give: func(a *envtest.Arguments) { a.Set("--z", "1").Enable("y").Append("x", "2") },
			want: append(append([]string(nil), defaults...), "--z=1", "--y", "--x=2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := envtest.EmptyArguments()
			tt.give(a)
			assert.Equal(t, tt.want, envtest.ApplyArguments(a, defaults))
		})
	}
}

func TestConfigAndKubeConfigFields(t *testing.T) {
	require.NotNil(t, env.Config, "Start sets the Config field")
	assert.Equal(t, cfg.Host, env.Config.Host)
	assert.NotNil(t, env.Scheme, "Start defaults Scheme")
	fromFile, err := clientcmd.RESTConfigFromKubeConfig(env.KubeConfig)
	require.NoError(t, err, "KubeConfig is a kubeconfig file")
	assert.Equal(t, cfg.Host, fromFile.Host)
	assert.Equal(t, cfg.CertData, fromFile.CertData)
}
