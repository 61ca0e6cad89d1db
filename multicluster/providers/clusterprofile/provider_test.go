package clusterprofile_test

import (
	"context"
	"encoding/base64"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/multicluster/providers/clusterprofile"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/providertest"
)

// restConfig is the admin config of the package's control plane: the hub,
// with a minimal ClusterProfile CRD, and every member cluster the
// profiles point at.
var restConfig *rest.Config

func TestMain(m *testing.M) {
	if os.Getenv(pluginEnv) == "1" {
		os.Exit(execPlugin())
	}
	testenv.Main(m, testenv.Options{
		Env:   &envtest.Environment{CRDDirectoryPaths: []string{"testdata/crds"}, ErrorIfCRDPathMissing: true},
		Setup: func(cfg *rest.Config) error { restConfig = cfg; return nil },
	})
}

// hangGuard bounds each wait, so that a bug fails the test instead of
// hanging it; it is not a latency assertion.
const hangGuard = time.Minute

func hostOf(h string) string { return strings.Replace(restConfig.Host, "127.0.0.1", h, 1) }

// profile is a ClusterProfile whose status offers providers under field
// ("accessProviders" or "credentialProviders"), each reaching the test
// control plane at host.
func profile(ns, name, field, host string, providers ...string) *unstructured.Unstructured {
	var list []any
	for _, p := range providers {
		list = append(list, map[string]any{"name": p, "cluster": map[string]any{
			"server":                     hostOf(host),
			"certificate-authority-data": base64.StdEncoding.EncodeToString(restConfig.CAData),
		}})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterprofile.Group + "/" + clusterprofile.Version, "kind": "ClusterProfile",
		"metadata": map[string]any{"namespace": ns, "name": name, "labels": map[string]any{clusterprofile.LabelClusterManager: "test"}},
		"spec":     map[string]any{"clusterManager": map[string]any{"name": "test"}, "displayName": name},
		"status":   map[string]any{field: list},
	}}
}

// adminCredentials completes a profile's endpoint with the control plane's
// admin client certificate: the in-process credentials hook.
func adminCredentials(_ context.Context, _ *unstructured.Unstructured, cfg *rest.Config) error {
	cfg.CertData, cfg.KeyData = restConfig.CertData, restConfig.KeyData
	return nil
}

func TestProfilesEngageThroughAccessProvidersAndSecrets(t *testing.T) {
	const ns = "inventory"
	c, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))

	rec := providertest.NewRecorder()
	var logs providertest.Logs
	p, err := clusterprofile.New(restConfig, clusterprofile.Options{
		Namespace:       ns,
		AccessProviders: []clusterprofile.AccessProvider{{Name: "token", Credentials: adminCredentials}},
		SecretConsumer:  "my-operator",
		Logger:          logs.Logger(),
	})
	require.NoError(t, err)
	stop := providertest.Run(p, rec)

	eu := profile(ns, "eu-1", "accessProviders", "127.0.0.1", "oidc", "token")
	require.NoError(t, c.Create(ctx, eu))
	require.NoError(t, c.Create(ctx, profile(ns, "us-1", "credentialProviders", "127.0.0.1", "token")))
	require.NoError(t, c.Create(ctx, profile(ns, "ap-1", "accessProviders", "127.0.0.1", "oidc")))
	require.NoError(t, c.Create(ctx, profile(ns, "sec-1", "accessProviders", "127.0.0.1")))
	require.NoError(t, rec.WaitNames(ctx, "inventory/eu-1", "inventory/us-1"))
	require.NoError(t, providertest.Reach(ctx, rec.Current()["inventory/eu-1"]), "the endpoint and CA from the profile, the credentials from the hook")
	require.NoError(t, logs.Wait(ctx, "ClusterProfile inventory/ap-1 offers access providers [oidc], none of which this operator has credentials for [token]"))

	// The cluster manager's Secret for this consumer engages sec-1.
	data, err := providertest.Kubeconfig(map[string]*rest.Config{"sec-1": restConfig}, "sec-1")
	require.NoError(t, err)
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sec-1-for-my-operator", Labels: map[string]string{
			clusterprofile.SecretLabelConsumer: "my-operator", clusterprofile.SecretLabelProfile: "sec-1"}},
		Data: map[string][]byte{clusterprofile.SecretDataKey: data},
	}
	require.NoError(t, c.Create(ctx, sec))
	require.NoError(t, rec.WaitNames(ctx, "inventory/eu-1", "inventory/sec-1", "inventory/us-1"))
	require.NoError(t, providertest.Reach(ctx, rec.Current()["inventory/sec-1"]))

	// A changed endpoint re-engages; a changed property does not.
	eu.Object["status"] = profile(ns, "eu-1", "accessProviders", "localhost", "token").Object["status"]
	require.NoError(t, c.Update(ctx, eu))
	require.NoError(t, rec.Wait(ctx, func(r *providertest.Recorder) bool {
		cfg := r.Current()["inventory/eu-1"]
		return cfg != nil && cfg.Host == hostOf("localhost")
	}))
	require.NoError(t, providertest.Reach(ctx, rec.Current()["inventory/eu-1"]))
	events := len(rec.Events())
	eu.Object["status"].(map[string]any)["properties"] = []any{map[string]any{"name": "region", "value": "eu"}}
	require.NoError(t, c.Update(ctx, eu))

	// Deleted profile, deleted Secret: disengaged.
	require.NoError(t, c.Delete(ctx, eu))
	require.NoError(t, rec.WaitNames(ctx, "inventory/sec-1", "inventory/us-1"))
	require.NoError(t, c.Delete(ctx, sec))
	require.NoError(t, rec.WaitNames(ctx, "inventory/us-1"))
	assert.Equal(t, []providertest.Event{
		{Op: "end", Name: "inventory/eu-1", Host: hostOf("localhost")},
		{Op: "end", Name: "inventory/sec-1", Host: restConfig.Host},
	}, rec.Events()[events:], "the property change engaged nothing")
	assert.Equal(t, 1, logs.Count("ClusterProfile inventory/ap-1 offers access providers"), "logged once: %s", logs.String())
	assert.Empty(t, rec.Violations())

	require.NoError(t, stop())
	require.NoError(t, rec.WaitNames(ctx), "Run's end ends every engagement")
}

func TestNewValidates(t *testing.T) {
	_, err := clusterprofile.New(nil, clusterprofile.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rest.Config is nil")
	assert.Contains(t, err.Error(), "set Options.AccessProviders or Options.SecretConsumer")

	_, err = clusterprofile.New(restConfig, clusterprofile.Options{AccessProviders: []clusterprofile.AccessProvider{
		{Name: "a", Credentials: adminCredentials, ProfileArgs: "Prepend"},
		{Name: "a"},
		{},
	}})
	require.Error(t, err)
	for _, want := range []string{
		`Options.AccessProviders[0] "a": unknown ProfileArgs "Prepend"`,
		`Options.AccessProviders[1] "a" is listed twice`,
		`Options.AccessProviders[1] "a": set exactly one of Exec and Credentials`,
		`Options.AccessProviders[2] "" has no Name`,
	} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestReadyGatesEngagement(t *testing.T) {
	const ns = "inventory-ready"
	c, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	rec := providertest.NewRecorder()
	var logs providertest.Logs
	p, err := clusterprofile.New(restConfig, clusterprofile.Options{
		Namespace:       ns,
		AccessProviders: []clusterprofile.AccessProvider{{Name: "token", Credentials: adminCredentials}},
		Ready:           clusterprofile.ControlPlaneHealthy,
		Logger:          logs.Logger(),
	})
	require.NoError(t, err)
	stop := providertest.Run(p, rec)

	health := func(u *unstructured.Unstructured, status string) {
		u.Object["status"].(map[string]any)["conditions"] = []any{map[string]any{
			"type": "ControlPlaneHealthy", "status": status, "reason": "Test", "message": "",
			"lastTransitionTime": "2026-12-03T00:00:00Z",
		}}
	}
	u := profile(ns, "eu-1", "accessProviders", "127.0.0.1", "token")
	health(u, "False")
	require.NoError(t, c.Create(ctx, u))
	require.NoError(t, logs.Wait(ctx, "Options.Ready says the ClusterProfile is not ready", `"cluster"="inventory-ready/eu-1"`))
	assert.Empty(t, rec.Names())
	health(u, "True")
	require.NoError(t, c.Update(ctx, u))
	require.NoError(t, rec.WaitNames(ctx, ns+"/eu-1"))
	health(u, "Unknown")
	require.NoError(t, c.Update(ctx, u))
	require.NoError(t, rec.WaitNames(ctx))
	require.NoError(t, stop())
}
