package clusterprofile

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func entry(cluster map[string]any) map[string]any {
	return map[string]any{"name": "google", "cluster": cluster}
}

func execProvider(args ArgsPolicy, env EnvPolicy) AccessProvider {
	return AccessProvider{Name: "google", ProfileArgs: args, ProfileEnv: env, Exec: &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1", Command: "/plugins/gcp", Args: []string{"--fleet"},
		Env:                []clientcmdapi.ExecEnvVar{{Name: "REGION", Value: "operator"}},
		ProvideClusterInfo: true, InteractiveMode: clientcmdapi.IfAvailableExecInteractiveMode,
	}}
}

var withExtensions = map[string]any{
	"server": "https://eu-1.example:443", "certificate-authority-data": "Q0E=", "tls-server-name": "eu-1",
	"proxy-url": "http://proxy.example:3128",
	"extensions": []any{
		map[string]any{"name": ExecExtension, "extension": map[string]any{"project": "p1"}},
		map[string]any{"name": ArgsExtension, "extension": []any{"--cluster=eu-1"}},
		map[string]any{"name": EnvExtension, "extension": map[string]any{"REGION": "profile", "ZONE": "b"}},
	},
}

func TestRestConfigForExec(t *testing.T) {
	tests := []struct {
		name     string
		args     ArgsPolicy
		env      EnvPolicy
		wantArgs []string
		wantEnv  []clientcmdapi.ExecEnvVar
	}{
		{name: "profile extensions ignored by default", wantArgs: []string{"--fleet"},
			wantEnv: []clientcmdapi.ExecEnvVar{{Name: "REGION", Value: "operator"}}},
		{name: "append, append if not exists", args: ArgsAppend, env: EnvAppendIfNotExists,
			wantArgs: []string{"--fleet", "--cluster=eu-1"},
			wantEnv:  []clientcmdapi.ExecEnvVar{{Name: "REGION", Value: "operator"}, {Name: "ZONE", Value: "b"}}},
		{name: "replace", args: ArgsIgnore, env: EnvReplace, wantArgs: []string{"--fleet"},
			wantEnv: []clientcmdapi.ExecEnvVar{{Name: "REGION", Value: "profile"}, {Name: "ZONE", Value: "b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ap := execProvider(tt.args, tt.env)
			cfg, err := restConfigFor(ap, entry(withExtensions))
			require.NoError(t, err)
			assert.Equal(t, "https://eu-1.example:443", cfg.Host)
			assert.Equal(t, []byte("CA"), cfg.CAData)
			assert.Equal(t, "eu-1", cfg.ServerName)
			proxy, err := cfg.Proxy(&http.Request{})
			require.NoError(t, err)
			assert.Equal(t, "http://proxy.example:3128", proxy.String())
			require.NotNil(t, cfg.ExecProvider)
			assert.Equal(t, tt.wantArgs, cfg.ExecProvider.Args)
			assert.Equal(t, tt.wantEnv, cfg.ExecProvider.Env)
			assert.Equal(t, clientcmdapi.NeverExecInteractiveMode, cfg.ExecProvider.InteractiveMode)
			assert.Equal(t, &runtime.Unknown{Raw: []byte(`{"project":"p1"}`), ContentType: runtime.ContentTypeJSON}, cfg.ExecProvider.Config)
			assert.Equal(t, []string{"--fleet"}, ap.Exec.Args, "the operator's ExecConfig is not modified")
		})
	}
}

func TestRestConfigForRefuses(t *testing.T) {
	_, err := restConfigFor(execProvider("", ""), entry(map[string]any{"certificate-authority-data": "Q0E="}))
	assert.ErrorContains(t, err, `access provider "google": the cluster entry has no server`)
	_, err = restConfigFor(execProvider("", ""), entry(map[string]any{"server": "https://x", "certificate-authority": "/var/run/secrets/ca.crt"}))
	assert.ErrorContains(t, err, `names a local file certificate-authority "/var/run/secrets/ca.crt"`)
	_, err = restConfigFor(execProvider(ArgsAppend, ""), entry(map[string]any{"server": "https://x",
		"extensions": []any{map[string]any{"name": ArgsExtension, "extension": map[string]any{"not": "a list"}}}}))
	assert.ErrorContains(t, err, "extension "+ArgsExtension+": not a list of strings")
}

func TestOfferedPrefersAccessProviders(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
		"credentialProviders": []any{map[string]any{"name": "a", "cluster": map[string]any{"server": "https://old"}}},
		"accessProviders": []any{
			map[string]any{"name": "a", "cluster": map[string]any{"server": "https://new"}},
			map[string]any{"name": "b"},
		},
	}}}
	byName, names := offered(u)
	assert.Equal(t, []string{"a", "b"}, names)
	assert.Equal(t, "https://new", byName["a"]["cluster"].(map[string]any)["server"])
}
