package clusterapi_test

import (
	"context"
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
	"github.com/kubeloop/kubeloop/multicluster/providers/clusterapi"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/providertest"
)

// restConfig is the admin config of the package's control plane: the
// management cluster, with a minimal Cluster CRD, and every workload
// cluster the tests' kubeconfigs point at.
var restConfig *rest.Config

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{
		Env:   &envtest.Environment{CRDDirectoryPaths: []string{"testdata/crds"}, ErrorIfCRDPathMissing: true},
		Setup: func(cfg *rest.Config) error { restConfig = cfg; return nil },
	})
}

// hangGuard bounds each wait, so that a bug fails the test instead of
// hanging it; it is not a latency assertion.
const hangGuard = time.Minute

func setup(t *testing.T, ns string) (client.Client, context.Context) {
	t.Helper()
	c, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	t.Cleanup(cancel)
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	return c, ctx
}

func hostOf(h string) string { return strings.Replace(restConfig.Host, "127.0.0.1", h, 1) }

// kubeconfigSecret is cluster-api's Secret for cluster name in ns, whose
// kubeconfig reaches the test control plane at host.
func kubeconfigSecret(t *testing.T, ns, name, host string) *corev1.Secret {
	t.Helper()
	data, err := providertest.Kubeconfig(map[string]*rest.Config{name: providertest.WithHost(restConfig, hostOf(host))}, name)
	require.NoError(t, err)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + clusterapi.KubeconfigSuffix,
			Labels: map[string]string{clusterapi.ClusterNameLabel: name}},
		Type: "cluster.x-k8s.io/secret",
		Data: map[string][]byte{clusterapi.KubeconfigDataKey: data},
	}
}

func newCluster(version, ns, name string, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterapi.Group + "/" + version, "kind": "Cluster",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     map[string]any{"controlPlaneEndpoint": map[string]any{"host": "10.0.0.1", "port": int64(6443)}},
	}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func TestClustersEngageWhenProvisionedAndLeaveWhenDeleted(t *testing.T) {
	const ns = "capi"
	c, ctx := setup(t, ns)
	rec := providertest.NewRecorder()
	var logs providertest.Logs
	p, err := clusterapi.New(restConfig, clusterapi.Options{Namespace: ns, Logger: logs.Logger()})
	require.NoError(t, err)
	stop := providertest.Run(p, rec)

	// eu-1 (v1beta2) has its Secret but is not provisioned yet.
	eu := newCluster("v1beta2", ns, "eu-1", map[string]any{"phase": "Provisioning"})
	require.NoError(t, c.Create(ctx, eu))
	require.NoError(t, c.Create(ctx, kubeconfigSecret(t, ns, "eu-1", "127.0.0.1")))
	require.NoError(t, logs.Wait(ctx, `"cluster"="capi/eu-1"`, "waiting for the Cluster to report a working control plane"))
	assert.Empty(t, rec.Names())
	eu.Object["status"] = map[string]any{"initialization": map[string]any{"controlPlaneInitialized": true}}
	require.NoError(t, c.Update(ctx, eu))
	require.NoError(t, rec.WaitNames(ctx, "capi/eu-1"))
	require.NoError(t, providertest.Reach(ctx, rec.Current()["capi/eu-1"]))

	// us-1 (written as v1beta1) is ready; it engages once its Secret exists.
	us := newCluster("v1beta1", ns, "us-1", map[string]any{"controlPlaneReady": true})
	us.SetFinalizers([]string{"test.kubeloop.dev/hold"})
	require.NoError(t, c.Create(ctx, us))
	require.NoError(t, logs.Wait(ctx, `"cluster"="capi/us-1"`, "waiting for its kubeconfig Secret capi/us-1-kubeconfig"))
	require.NoError(t, c.Create(ctx, kubeconfigSecret(t, ns, "us-1", "127.0.0.1")))
	require.NoError(t, rec.WaitNames(ctx, "capi/eu-1", "capi/us-1"))

	// A rotated kubeconfig re-engages; a broken one is logged and not engaged.
	rotated := kubeconfigSecret(t, ns, "eu-1", "localhost")
	require.NoError(t, c.Update(ctx, rotated))
	require.NoError(t, rec.Wait(ctx, func(r *providertest.Recorder) bool {
		cfg := r.Current()["capi/eu-1"]
		return cfg != nil && cfg.Host == hostOf("localhost")
	}))
	require.NoError(t, providertest.Reach(ctx, rec.Current()["capi/eu-1"]))
	require.NoError(t, c.Create(ctx, newCluster("v1beta2", ns, "ap-1", map[string]any{"phase": "Provisioned"})))
	bad := kubeconfigSecret(t, ns, "ap-1", "127.0.0.1")
	bad.Data[clusterapi.KubeconfigDataKey] = []byte("garbage: [")
	require.NoError(t, c.Create(ctx, bad))
	require.NoError(t, logs.Wait(ctx, "Secret capi/ap-1-kubeconfig", "the kubeconfig does not parse"))

	// Deletion started (a finalizer holds us-1): disengaged. Deleted: disengaged.
	require.NoError(t, c.Delete(ctx, us))
	require.NoError(t, rec.WaitNames(ctx, "capi/eu-1"))
	require.NoError(t, c.Delete(ctx, eu))
	require.NoError(t, rec.WaitNames(ctx))
	assert.Empty(t, rec.Violations())
	assert.Equal(t, []providertest.Event{
		{Op: "engage", Name: "capi/eu-1", Host: hostOf("127.0.0.1")},
		{Op: "engage", Name: "capi/us-1", Host: hostOf("127.0.0.1")},
		{Op: "end", Name: "capi/eu-1", Host: hostOf("127.0.0.1")},
		{Op: "engage", Name: "capi/eu-1", Host: hostOf("localhost")},
		{Op: "end", Name: "capi/us-1", Host: hostOf("127.0.0.1")},
		{Op: "end", Name: "capi/eu-1", Host: hostOf("localhost")},
	}, rec.Events(), "ap-1 never engaged")
	for _, line := range [][]string{
		{`"cluster"="capi/eu-1"`, "waiting for the Cluster to report a working control plane"},
		{`"cluster"="capi/us-1"`, "waiting for its kubeconfig Secret"},
		{"Secret capi/ap-1-kubeconfig", "the kubeconfig does not parse"},
	} {
		assert.Equal(t, 1, logs.Count(line...), "logged once, though later syncs saw it: %q", line)
	}

	require.NoError(t, stop())
	require.NoError(t, c.Patch(ctx, us, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`))))
}

func TestVersionPinnedAndEngageUnprovisioned(t *testing.T) {
	const ns = "capi-pinned"
	c, ctx := setup(t, ns)
	rec := providertest.NewRecorder()
	p, err := clusterapi.New(restConfig, clusterapi.Options{Namespace: ns, Version: "v1beta1", EngageUnprovisioned: true, Logger: testenv.Logger()})
	require.NoError(t, err)
	stop := providertest.Run(p, rec)
	require.NoError(t, c.Create(ctx, newCluster("v1beta1", ns, "new", nil)))
	require.NoError(t, c.Create(ctx, kubeconfigSecret(t, ns, "new", "127.0.0.1")))
	require.NoError(t, rec.WaitNames(ctx, "capi-pinned/new"))
	require.NoError(t, stop())
	require.NoError(t, rec.WaitNames(ctx), "Run's end ends every engagement")
}

func TestNewValidates(t *testing.T) {
	_, err := clusterapi.New(nil, clusterapi.Options{Version: "v1alpha3", EngageUnprovisioned: true,
		Ready: func(*unstructured.Unstructured) bool { return true }})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "set Options.Ready or Options.EngageUnprovisioned, not both")
	assert.Contains(t, err.Error(), "rest.Config is nil")
	assert.Contains(t, err.Error(), `Options.Version "v1alpha3" is neither v1beta1 nor v1beta2`)
}

func TestReadyReplacesTheProvisionedCheck(t *testing.T) {
	const ns = "capi-ready"
	c, ctx := setup(t, ns)
	rec := providertest.NewRecorder()
	var logs providertest.Logs
	p, err := clusterapi.New(restConfig, clusterapi.Options{Namespace: ns, Logger: logs.Logger(),
		Ready: func(u *unstructured.Unstructured) bool { return u.GetLabels()["fleet.example/ready"] == "yes" }})
	require.NoError(t, err)
	stop := providertest.Run(p, rec)
	u := newCluster("v1beta2", ns, "eu-1", map[string]any{"phase": "Provisioned"})
	require.NoError(t, c.Create(ctx, u))
	require.NoError(t, c.Create(ctx, kubeconfigSecret(t, ns, "eu-1", "127.0.0.1")))
	require.NoError(t, logs.Wait(ctx, `"cluster"="capi-ready/eu-1"`, "waiting for the Cluster to report a working control plane"))
	assert.Empty(t, rec.Names(), "provisioned, but Ready says no")
	u.SetLabels(map[string]string{"fleet.example/ready": "yes"})
	require.NoError(t, c.Update(ctx, u))
	require.NoError(t, rec.WaitNames(ctx, ns+"/eu-1"))
	require.NoError(t, stop())
}
