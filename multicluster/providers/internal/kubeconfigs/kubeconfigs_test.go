package kubeconfigs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/kubeconfigs"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}) }

const twoContexts = `apiVersion: v1
kind: Config
current-context: eu
clusters:
- name: eu
  cluster: {server: "https://eu.example:6443"}
- name: us
  cluster: {server: "https://us.example:6443"}
- name: files
  cluster: {server: "https://files.example:6443", certificate-authority: /etc/ca.crt}
users:
- name: token
  user: {token: abc}
- name: exec
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws, interactiveMode: Never}
contexts:
- name: eu
  context: {cluster: eu, user: token}
- name: us
  context: {cluster: us, user: exec}
- name: ghost
  context: {cluster: nowhere, user: token}
- name: files
  context: {cluster: files, user: token}
`

func TestRESTConfig(t *testing.T) {
	cfg, err := kubeconfigs.Parse([]byte(twoContexts))
	require.NoError(t, err)
	assert.Equal(t, []string{"eu", "files", "ghost", "us"}, kubeconfigs.Contexts(cfg))

	tests := []struct {
		name, ctx string
		policy    kubeconfigs.Policy
		wantHost  string
		wantErr   []string
	}{
		{name: "current context", wantHost: "https://eu.example:6443"},
		{name: "named context", ctx: "eu", wantHost: "https://eu.example:6443"},
		{name: "exec refused", ctx: "us", wantErr: []string{`user "exec" of context "us" runs an exec plugin "aws"`, "AllowLocalCredentials"}},
		{name: "file refused", ctx: "files", wantErr: []string{`cluster "files" names a local file certificate-authority "/etc/ca.crt"`}},
		{name: "exec allowed", ctx: "us", policy: kubeconfigs.Policy{AllowLocalCredentials: true}, wantHost: "https://us.example:6443"},
		{name: "missing cluster", ctx: "ghost", wantErr: []string{`context "ghost" names cluster "nowhere", which the kubeconfig does not have`}},
		{name: "missing context", ctx: "mars", wantErr: []string{`the kubeconfig has no context "mars"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := kubeconfigs.RESTConfig(cfg, tt.ctx, tt.policy)
			if tt.wantErr != nil {
				require.Error(t, err)
				for _, w := range tt.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantHost, rc.Host)
		})
	}
}

func TestFromBytesErrors(t *testing.T) {
	tests := []struct{ name, give, want string }{
		{name: "empty", give: "", want: "the kubeconfig is empty"},
		{name: "not yaml", give: "{{{", want: "the kubeconfig does not parse"},
		{name: "no contexts", give: "apiVersion: v1\nkind: Config\n", want: "the kubeconfig has no contexts"},
		{name: "no server", give: "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {}}]\ncontexts: [{name: x, context: {cluster: c}}]\n", want: `cluster "c" of context "x" has no server`},
		{name: "two contexts, no current", give: "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: https://c}}]\ncontexts: [{name: a, context: {cluster: c}}, {name: b, context: {cluster: c}}]\n", want: "2 contexts and no current-context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kubeconfigs.FromBytes([]byte(tt.give), kubeconfigs.Policy{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	rc, err := kubeconfigs.FromBytes([]byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: https://c}}]\ncontexts: [{name: x, context: {cluster: c}}]\n"), kubeconfigs.Policy{})
	require.NoError(t, err, "one context without current-context is that context")
	assert.Equal(t, "https://c", rc.Host)
}
