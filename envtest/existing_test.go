package envtest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeloop/kubeloop/envtest"
)

// writeKubeconfig writes a kubeconfig for the shared control plane.
func writeKubeconfig(t *testing.T) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*kc, path))
	return path
}

// gizmoCRD is a CRD no other test installs.
func gizmoCRD(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	crds, err := envtest.ReadCRDs("testdata/crds/widgets.yaml")
	require.NoError(t, err)
	crd := crds[0]
	crd.SetName("gizmos.test.kubeloop.dev")
	require.NoError(t, unstructured.SetNestedField(crd.Object, "gizmos", "spec", "names", "plural"))
	require.NoError(t, unstructured.SetNestedField(crd.Object, "gizmo", "spec", "names", "singular"))
	require.NoError(t, unstructured.SetNestedField(crd.Object, "Gizmo", "spec", "names", "kind"))
	require.NoError(t, unstructured.SetNestedField(crd.Object, "GizmoList", "spec", "names", "listKind"))
	return crd
}

// TestUseExistingCluster runs an Environment against the shared control
// plane as if it were a cluster the developer already has, found through
// KUBECONFIG: it starts nothing, installs CRDs and webhooks, and removes
// at Stop only what it created.
func TestUseExistingCluster(t *testing.T) {
	ctx := t.Context()
	t.Setenv("KUBECONFIG", writeKubeconfig(t))
	url := "https://example.invalid/validate-gizmo"
	none := admissionregistrationv1.SideEffectClassNone
	existing := &envtest.Environment{
		UseExistingCluster: new(true),
		// widgets exists already (TestMain installed it); gizmos does not;
		// a missing path is skipped without ErrorIfCRDPathMissing.
		CRDDirectoryPaths: []string{"testdata/crds", "testdata/no-such-dir"},
		CRDs:              []*unstructured.Unstructured{gizmoCRD(t)},
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{{
				ObjectMeta: metav1.ObjectMeta{Name: "envtest-existing-validating"},
				Webhooks: []admissionregistrationv1.ValidatingWebhook{{
					Name: "vgizmo.kubeloop.dev", AdmissionReviewVersions: []string{"v1"}, SideEffects: &none,
					ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url},
					Rules: []admissionregistrationv1.RuleWithOperations{{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{"test.kubeloop.dev"}, APIVersions: []string{"v1"}, Resources: []string{"gizmos"}},
					}},
				}},
			}},
		},
	}
	got, err := existing.Start()
	require.NoError(t, err)
	assert.Equal(t, cfg.Host, got.Host, "the kubeconfig's cluster")
	etcdPID, apiPID := existing.PIDs()
	assert.Zero(t, etcdPID+apiPID, "no process is started")
	_, err = existing.AddUser(envtest.User{Name: "carol"})
	assert.Error(t, err, "no CA of its own on an existing cluster")

	dyn, err := dynamic.NewForConfig(got)
	require.NoError(t, err)
	gizmos := schema.GroupVersionResource{Group: "test.kubeloop.dev", Version: "v1", Resource: "gizmos"}
	_, err = dyn.Resource(gizmos).Namespace("default").List(ctx, metav1.ListOptions{})
	require.NoError(t, err, "the CRD is served once Start returns")
	cs, err := kubernetes.NewForConfig(got)
	require.NoError(t, err)
	vwc, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "envtest-existing-validating", metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, vwc.Webhooks[0].ClientConfig.URL)
	assert.True(t, strings.HasSuffix(*vwc.Webhooks[0].ClientConfig.URL, "/validate-gizmo"))
	assert.Contains(t, *vwc.Webhooks[0].ClientConfig.URL, "127.0.0.1:")
	certDir := existing.WebhookInstallOptions.LocalServingCertDir
	require.DirExists(t, certDir)

	require.NoError(t, existing.Stop())
	_, err = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "envtest-existing-validating", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the webhook configuration it created is deleted, got %v", err)
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	assert.Eventually(t, func() bool {
		_, err := crds.Get(ctx, "gizmos.test.kubeloop.dev", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, 30*time.Second, 100*time.Millisecond, "the CRD it created is deleted")
	_, err = crds.Get(ctx, "widgets.test.kubeloop.dev", metav1.GetOptions{})
	assert.NoError(t, err, "a CRD that existed before is left alone")
	_, err = os.Stat(certDir)
	assert.True(t, os.IsNotExist(err), "the certificate directory is removed")
}
