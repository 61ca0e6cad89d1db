package clusterprofile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/multicluster/providers/clusterprofile"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/providertest"
)

// pluginEnv makes the test binary an exec credential plugin (TestMain).
const pluginEnv = "CLUSTERPROFILE_TEST_PLUGIN"

// execPlugin is the test binary run as an exec plugin: it answers with the
// client certificate from its environment, and only when it got the
// profile's cluster config (the exec extension) and its argument.
func execPlugin() int {
	var info struct {
		Spec struct {
			Cluster struct {
				Server string          `json:"server"`
				Config json.RawMessage `json:"config"`
			} `json:"cluster"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(os.Getenv("KUBERNETES_EXEC_INFO")), &info); err != nil {
		fmt.Fprintln(os.Stderr, "plugin: KUBERNETES_EXEC_INFO:", err)
		return 1
	}
	if string(info.Spec.Cluster.Config) != `{"project":"p1"}` || !slices.Contains(os.Args[1:], "--cluster=eu-x") {
		fmt.Fprintf(os.Stderr, "plugin: got cluster config %s and args %v\n", info.Spec.Cluster.Config, os.Args[1:])
		return 1
	}
	out, _ := json.Marshal(map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
		"status": map[string]any{"clientCertificateData": os.Getenv("PLUGIN_CERT"), "clientKeyData": os.Getenv("PLUGIN_KEY")},
	})
	os.Stdout.Write(out)
	return 0
}

func TestExecPluginGetsTheProfilesConfig(t *testing.T) {
	const ns = "inventory-exec"
	c, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	self, err := os.Executable()
	require.NoError(t, err)

	p, err := clusterprofile.New(restConfig, clusterprofile.Options{
		Namespace: ns,
		Logger:    testenv.Logger(),
		AccessProviders: []clusterprofile.AccessProvider{{Name: "plugin", ProfileArgs: clusterprofile.ArgsAppend, Exec: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1", Command: self, ProvideClusterInfo: true,
			Env: []clientcmdapi.ExecEnvVar{{Name: pluginEnv, Value: "1"},
				{Name: "PLUGIN_CERT", Value: string(restConfig.CertData)}, {Name: "PLUGIN_KEY", Value: string(restConfig.KeyData)}},
		}}},
	})
	require.NoError(t, err)
	rec := providertest.NewRecorder()
	stop := providertest.Run(p, rec)
	defer func() { require.NoError(t, stop()) }()

	u := profile(ns, "eu-x", "accessProviders", "127.0.0.1", "plugin")
	cluster := u.Object["status"].(map[string]any)["accessProviders"].([]any)[0].(map[string]any)["cluster"].(map[string]any)
	cluster["extensions"] = []any{
		map[string]any{"name": clusterprofile.ExecExtension, "extension": map[string]any{"project": "p1"}},
		map[string]any{"name": clusterprofile.ArgsExtension, "extension": []any{"--cluster=eu-x"}},
	}
	require.NoError(t, c.Create(ctx, u))
	require.NoError(t, rec.WaitNames(ctx, ns+"/eu-x"))
	cfg := rest.CopyConfig(rec.Current()[ns+"/eu-x"])
	require.NoError(t, providertest.Reach(ctx, cfg), "the plugin's credentials reach the control plane")
}
