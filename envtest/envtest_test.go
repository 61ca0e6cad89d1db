package envtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

// env is the control plane shared by the tests of this package.
var (
	env *envtest.Environment
	cfg *rest.Config
)

func TestMain(m *testing.M) {
	env = &envtest.Environment{CRDDirectoryPaths: []string{"testdata/crds"}, Authorization: "RBAC",
		WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: []string{"testdata/webhook"}}}
	start := time.Now()
	testenv.Main(m, testenv.Options{
		Env: env,
		Setup: func(c *rest.Config) error {
			cfg = c
			fmt.Fprintf(os.Stderr, "envtest: control plane ready in %s\n", time.Since(start).Round(time.Millisecond))
			return nil
		},
	})
}

func TestConfigMapRoundTrip(t *testing.T) {
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	cms := cs.CoreV1().ConfigMaps(metav1.NamespaceDefault)

	w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=round-trip"})
	require.NoError(t, err)
	defer w.Stop()

	created, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "round-trip"},
		Data:       map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	got, err := cms.Get(ctx, "round-trip", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "v", got.Data["k"])
	assert.Equal(t, created.UID, got.UID)

	list, err := cms.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=round-trip"})
	require.NoError(t, err)
	assert.Len(t, list.Items, 1)

	select {
	case ev := <-w.ResultChan():
		assert.Equal(t, watch.Added, ev.Type)
		assert.Equal(t, "round-trip", ev.Object.(*corev1.ConfigMap).Name)
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event for the created ConfigMap")
	}
}

func TestCustomResource(t *testing.T) {
	ctx := t.Context()
	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	widgets := dyn.Resource(schema.GroupVersionResource{Group: "test.kubeloop.dev", Version: "v1", Resource: "widgets"}).Namespace("default")
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.kubeloop.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1"},
		"spec":     map[string]any{"size": int64(3)},
	}}
	_, err = widgets.Create(ctx, obj, metav1.CreateOptions{})
	require.NoError(t, err)
	got, err := widgets.Get(ctx, "w1", metav1.GetOptions{})
	require.NoError(t, err)
	size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size")
	assert.Equal(t, int64(3), size)
}

func TestInstallCRDAfterStart(t *testing.T) {
	ctx := t.Context()
	crds, err := envtest.ReadCRDs("testdata/crds/widgets.yaml")
	require.NoError(t, err)
	crd := crds[0]
	crd.SetName("gadgets.test.kubeloop.dev")
	require.NoError(t, unstructured.SetNestedField(crd.Object, "gadgets", "spec", "names", "plural"))
	require.NoError(t, unstructured.SetNestedField(crd.Object, "gadget", "spec", "names", "singular"))
	require.NoError(t, unstructured.SetNestedField(crd.Object, "Gadget", "spec", "names", "kind"))
	require.NoError(t, unstructured.SetNestedField(crd.Object, "GadgetList", "spec", "names", "listKind"))
	require.NoError(t, env.InstallCRDs(ctx, crd))

	dyn, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	_, err = dyn.Resource(schema.GroupVersionResource{Group: "test.kubeloop.dev", Version: "v1", Resource: "gadgets"}).
		Namespace("default").List(ctx, metav1.ListOptions{})
	assert.NoError(t, err, "the CRD is served as soon as InstallCRDs returns")
}

func TestRestrictedUser(t *testing.T) {
	ctx := t.Context()
	admin, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	_, err = admin.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "cm-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "cm-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "cm-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "bob", APIGroup: "rbac.authorization.k8s.io"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	bobCfg, err := env.AddUser(envtest.User{Name: "bob"})
	require.NoError(t, err)
	bob, err := kubernetes.NewForConfig(bobCfg)
	require.NoError(t, err)

	// RBAC bindings reach the authorizer's cache a moment after they are
	// written; poll until bob may list configmaps.
	require.Eventually(t, func() bool {
		_, err := bob.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		return err == nil
	}, 30*time.Second, 50*time.Millisecond)
	_, err = bob.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "bob may not list secrets, got %v", err)
}

func TestRestartAPIServer(t *testing.T) {
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "survives-restart"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	_, apiPID := env.PIDs()
	require.NoError(t, env.StopAPIServer())
	assert.True(t, envtest.ProcessGone(apiPID), "the stopped API server's process is gone")
	_, err = cs.CoreV1().ConfigMaps("default").Get(ctx, "survives-restart", metav1.GetOptions{})
	assert.Error(t, err, "no API server while stopped")

	require.NoError(t, env.StartAPIServer())
	got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "survives-restart", metav1.GetOptions{})
	require.NoError(t, err, "the same config reaches the restarted server and etcd kept the data")
	assert.Equal(t, "survives-restart", got.Name)
}

func TestRestartEtcd(t *testing.T) {
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "survives-etcd-restart"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	etcdPID, _ := env.PIDs()
	require.NoError(t, env.StopEtcd())
	assert.True(t, envtest.ProcessGone(etcdPID), "the stopped etcd's process is gone")
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, err = cs.CoreV1().ConfigMaps("default").Create(short, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "written-while-down"}}, metav1.CreateOptions{})
	cancel()
	assert.Error(t, err, "no write succeeds while etcd is down")

	require.NoError(t, env.StartEtcd())
	// The API server's etcd client reconnects on its own; poll until a
	// read goes through.
	require.Eventually(t, func() bool {
		got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "survives-etcd-restart", metav1.GetOptions{})
		return err == nil && got.Name == "survives-etcd-restart"
	}, 60*time.Second, 100*time.Millisecond, "etcd kept the data and the API server reconnected")
}

func TestStopLeavesNoProcess(t *testing.T) {
	other := &envtest.Environment{}
	otherCfg, err := other.Start()
	require.NoError(t, err)
	etcdPID, apiPID := other.PIDs()
	require.NotZero(t, etcdPID)
	require.NotZero(t, apiPID)
	cs, err := kubernetes.NewForConfig(otherCfg)
	require.NoError(t, err)
	_, err = cs.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{})
	require.NoError(t, err)

	require.NoError(t, other.Stop())
	assert.True(t, envtest.ProcessGone(etcdPID), "etcd is gone after Stop")
	assert.True(t, envtest.ProcessGone(apiPID), "kube-apiserver is gone after Stop")
	assert.NoError(t, other.Stop(), "a second Stop is harmless")
}

func TestMissingBinaries(t *testing.T) {
	dir := t.TempDir()
	// Hide the places searched after BinaryAssetsDirectory.
	t.Setenv(envtest.ToolsDirEnv, filepath.Join(dir, "no-tools"))
	t.Setenv(envtest.AssetsDirEnv, "")
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "no-data"))
	_, err := (&envtest.Environment{BinaryAssetsDirectory: dir}).Start()
	require.ErrorIs(t, err, envtest.ErrBinaryMissing)
	assert.Contains(t, err.Error(), "make tools")
	assert.Contains(t, err.Error(), "BinaryAssetsDirectory "+dir+": etcd does not exist, kube-apiserver does not exist")
}

func TestBadCRDFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(dir+"/cm.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"), 0o600))
	_, err := envtest.ReadCRDs(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a CustomResourceDefinition")
}

func TestStartTimeoutShowsOutput(t *testing.T) {
	// An unknown flag makes kube-apiserver exit at once: the error must say
	// so and carry what it printed.
	bad := &envtest.Environment{APIServerFlags: []string{"--no-such-flag=1"}}
	_, err := bad.Start()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "kube-apiserver exited before it was ready")
	assert.Contains(t, err.Error(), "no-such-flag")
	assert.NoError(t, bad.Stop())
}
