package envtest_test

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeloop/kubeloop/envtest"
)

// serveAdmission serves the two webhooks of testdata/webhook on the
// address and certificate envtest prepared: the mutating one labels the
// ConfigMap, the validating one denies a ConfigMap with a "deny" key.
func serveAdmission(t *testing.T, opts *envtest.WebhookInstallOptions) {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(opts.LocalServingCertDir, "tls.crt"), filepath.Join(opts.LocalServingCertDir, "tls.key"))
	require.NoError(t, err)
	ln, err := tls.Listen("tcp", net.JoinHostPort(opts.LocalServingHost, strconv.Itoa(opts.LocalServingPort)),
		&tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	review := func(w http.ResponseWriter, r *http.Request, answer func(cm *corev1.ConfigMap, resp *admissionv1.AdmissionResponse)) {
		var in admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		var cm corev1.ConfigMap
		_ = json.Unmarshal(in.Request.Object.Raw, &cm)
		resp := &admissionv1.AdmissionResponse{UID: in.Request.UID, Allowed: true}
		answer(&cm, resp)
		in.Response, in.Request = resp, nil
		_ = json.NewEncoder(w).Encode(&in)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mutate--v1-configmap", func(w http.ResponseWriter, r *http.Request) {
		review(w, r, func(_ *corev1.ConfigMap, resp *admissionv1.AdmissionResponse) {
			pt := admissionv1.PatchTypeJSONPatch
			resp.PatchType = &pt
			resp.Patch = []byte(`[{"op":"add","path":"/metadata/labels/mutated","value":"by-envtest-webhook"}]`)
		})
	})
	mux.HandleFunc("/validate--v1-configmap", func(w http.ResponseWriter, r *http.Request) {
		review(w, r, func(cm *corev1.ConfigMap, resp *admissionv1.AdmissionResponse) {
			if _, deny := cm.Data["deny"]; deny {
				resp.Allowed = false
				resp.Result = &metav1.Status{Message: "denied by the local validating webhook", Code: http.StatusForbidden}
			}
		})
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
}

// TestWebhookInstallOptions installs kubebuilder-shaped config/webhook
// manifests and checks that the real API server calls a local server
// with the certificate envtest made.
func TestWebhookInstallOptions(t *testing.T) {
	ctx := t.Context()
	opts := &env.WebhookInstallOptions
	assert.Equal(t, "127.0.0.1", opts.LocalServingHost)
	require.NotZero(t, opts.LocalServingPort)
	require.NotEmpty(t, opts.LocalServingCAData)
	for _, f := range []string{"tls.crt", "tls.key"} {
		_, err := os.Stat(filepath.Join(opts.LocalServingCertDir, f))
		require.NoError(t, err, f)
	}

	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "envtest-mutating-webhook-configuration", metav1.GetOptions{})
	require.NoError(t, err)
	require.Len(t, mwc.Webhooks, 1)
	cc := mwc.Webhooks[0].ClientConfig
	assert.Nil(t, cc.Service, "the Service reference is replaced")
	require.NotNil(t, cc.URL)
	assert.Equal(t, "https://127.0.0.1:"+strconv.Itoa(opts.LocalServingPort)+"/mutate--v1-configmap", *cc.URL)
	assert.Equal(t, opts.LocalServingCAData, cc.CABundle)
	_, err = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "envtest-validating-webhook-configuration", metav1.GetOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().Services("system").Get(ctx, "webhook-service", metav1.GetOptions{})
	assert.Error(t, err, "the Service of config/webhook is not installed")

	serveAdmission(t, opts)
	cms := cs.CoreV1().ConfigMaps("default")
	labels := map[string]string{"envtest-webhook": "yes"}
	var got *corev1.ConfigMap
	// The API server's webhook client may need a moment for a
	// configuration it has just seen; retry until the server answers.
	require.Eventually(t, func() bool {
		got, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "hooked-", Labels: labels}}, metav1.CreateOptions{})
		return err == nil
	}, 30*time.Second, 100*time.Millisecond, "last error: %v", err)
	assert.Equal(t, "by-envtest-webhook", got.Labels["mutated"], "the mutating webhook ran")

	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "hooked-", Labels: labels},
		Data: map[string]string{"deny": "1"}}, metav1.CreateOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "denied by the local validating webhook")
}

func TestWebhookPathMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "config", "webhook")
	_, err := (&envtest.Environment{WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: []string{missing}}}).Start()
	require.Error(t, err)
	assert.True(t, errors.Is(err, fs.ErrNotExist), "names a missing path: %v", err)
	assert.Contains(t, err.Error(), missing)
}

func TestErrorIfCRDPathMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "config", "crd", "bases")
	bad := &envtest.Environment{CRDDirectoryPaths: []string{missing}, ErrorIfCRDPathMissing: true}
	_, err := bad.Start()
	require.Error(t, err)
	assert.True(t, errors.Is(err, fs.ErrNotExist), "names a missing path: %v", err)
	assert.Contains(t, err.Error(), missing)
	etcdPID, apiPID := bad.PIDs()
	assert.Zero(t, etcdPID+apiPID, "nothing was started for a missing path")
	assert.NoError(t, bad.Stop())
}

// fakeBinaries writes etcd and kube-apiserver scripts into dir that print
// who they are and exit, so a test can tell which directory Start used
// without starting a control plane.
func fakeBinaries(t *testing.T, dir, who string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, name := range []string{"etcd", "kube-apiserver"} {
		script := "#!/bin/sh\necho \"" + name + " from " + who + "\"\nexit 3\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755))
	}
}

func TestBinaryLookupOrder(t *testing.T) {
	assets := t.TempDir()
	fakeBinaries(t, assets, "KUBEBUILDER_ASSETS")
	own := t.TempDir()
	fakeBinaries(t, own, "BinaryAssetsDirectory")
	toolsRoot := t.TempDir()
	fakeBinaries(t, filepath.Join(toolsRoot, filepath.Base(envtest.DefaultBinaryAssetsDirectory())), "the kubeloop tools cache")
	t.Setenv(envtest.ToolsDirEnv, toolsRoot)

	startErr := func(e *envtest.Environment) string {
		t.Helper()
		e.StartTimeout = 20 * time.Second
		_, err := e.Start()
		require.Error(t, err)
		require.NoError(t, e.Stop())
		return err.Error()
	}
	t.Setenv(envtest.AssetsDirEnv, assets)
	assert.Contains(t, startErr(&envtest.Environment{}), "etcd from KUBEBUILDER_ASSETS",
		"setup-envtest's directory is used when it holds both binaries")
	assert.Contains(t, startErr(&envtest.Environment{BinaryAssetsDirectory: own}), "etcd from KUBEBUILDER_ASSETS",
		"KUBEBUILDER_ASSETS comes before BinaryAssetsDirectory, as in controller-runtime")

	incomplete := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(incomplete, "etcd"), []byte("#!/bin/sh\nexit 3\n"), 0o755))
	t.Setenv(envtest.AssetsDirEnv, incomplete)
	assert.Contains(t, startErr(&envtest.Environment{}), "etcd from the kubeloop tools cache",
		"a KUBEBUILDER_ASSETS without kube-apiserver is passed over")
	assert.Contains(t, startErr(&envtest.Environment{BinaryAssetsDirectory: own}), "etcd from BinaryAssetsDirectory",
		"then BinaryAssetsDirectory")
}
