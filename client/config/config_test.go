package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/client/config"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}) }

func writeKubeconfig(t *testing.T, dir, host string) string {
	t.Helper()
	p := filepath.Join(dir, "kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "` + host + `"}
- name: other
  cluster: {server: "https://other.invalid:6443"}
users:
- name: u
  user: {token: abc}
contexts:
- name: main
  context: {cluster: c, user: u}
- name: second
  context: {cluster: other, user: u}
current-context: main
`
	require.NoError(t, os.WriteFile(p, []byte(data), 0o600))
	return p
}

func TestLoadPrecedence(t *testing.T) {
	explicit := writeKubeconfig(t, t.TempDir(), "https://explicit.invalid:6443")
	fromEnv := writeKubeconfig(t, t.TempDir(), "https://env.invalid:6443")
	home := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".kube"), 0o700))
	homeFile := writeKubeconfig(t, filepath.Join(home, ".kube"), "https://home.invalid:6443")
	require.NoError(t, os.Rename(homeFile, filepath.Join(home, ".kube", "config")))

	tests := []struct {
		name    string
		path    string
		env     string
		home    string
		want    string
		wantErr error
	}{
		{name: "explicit path wins", path: explicit, env: fromEnv, home: home, want: "https://explicit.invalid:6443"},
		{name: "KUBECONFIG next", env: fromEnv, home: home, want: "https://env.invalid:6443"},
		{name: "home last", home: home, want: "https://home.invalid:6443"},
		{name: "nothing", home: t.TempDir(), wantErr: config.ErrNoConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tt.env)
			t.Setenv("HOME", tt.home)
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			cfg, err := config.Load(tt.path)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Host)
			assert.Equal(t, float32(-1), cfg.QPS, "client-side rate limiting is off")
		})
	}
}

func TestLoadContextAndErrors(t *testing.T) {
	p := writeKubeconfig(t, t.TempDir(), "https://main.invalid:6443")
	cfg, err := config.LoadContext(p, "second")
	require.NoError(t, err)
	assert.Equal(t, "https://other.invalid:6443", cfg.Host)

	t.Setenv("KUBECONFIG", p)
	cfg, err = config.GetConfigWithContext("second")
	require.NoError(t, err)
	assert.Equal(t, "https://other.invalid:6443", cfg.Host)

	_, err = config.Load(filepath.Join(t.TempDir(), "missing"))
	assert.ErrorContains(t, err, "config: load")
}
