package webhook_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/webhook"
	"github.com/kubeloop/kubeloop/webhook/internal/testwidget"
)

var (
	widgetsV1 = schema.GroupVersionResource{Group: testwidget.Group, Version: "v1", Resource: "widgets"}
	widgetsV2 = schema.GroupVersionResource{Group: testwidget.Group, Version: "v2", Resource: "widgets"}
	nameSeq   atomic.Int64
)

// uniqueName returns a name no other test uses (nothing is garbage
// collected in envtest).
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%1e6, nameSeq.Add(1))
}

func dynamicClient(t *testing.T) *dynamic.DynamicClient {
	t.Helper()
	dc, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	return dc
}

func widget(apiVersion, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     spec,
	}}
}

// eventually retries f until it returns nil: admission configuration
// changes take a moment to reach the API server.
func eventually(t *testing.T, f func() error) {
	t.Helper()
	var last error
	require.Eventually(t, func() bool {
		last = f()
		return last == nil
	}, 30*time.Second, 100*time.Millisecond, "last error: %v", &last)
}

// expectWebhooks checks, through the API server, that the defaulter, the
// validator and the conversion webhook are called and answer.
func expectWebhooks(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	dc := dynamicClient(t)

	name := uniqueName("defaulted")
	eventually(t, func() error {
		created, err := dc.Resource(widgetsV1).Namespace("default").Create(ctx, widget("test.kubeloop.dev/v1", name, map[string]any{"size": int64(2)}), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if color, _, _ := unstructured.NestedString(created.Object, "spec", "color"); color != "blue" {
			return fmt.Errorf("spec.color = %q, want the defaulted blue", color)
		}
		return nil
	})

	eventually(t, func() error {
		_, err := dc.Resource(widgetsV1).Namespace("default").Create(ctx, widget("test.kubeloop.dev/v1", uniqueName("invalid"), map[string]any{"size": int64(-1)}), metav1.CreateOptions{})
		if err == nil {
			return fmt.Errorf("an invalid widget was admitted")
		}
		want := `admission webhook "vwidget.test.kubeloop.dev" denied the request: spec.size must not be negative, got -1`
		if !strings.Contains(err.Error(), want) {
			return fmt.Errorf("error %q does not contain %q", err, want)
		}
		return nil
	})

	eventually(t, func() error {
		v2, err := dc.Resource(widgetsV2).Namespace("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if width, _, _ := unstructured.NestedInt64(v2.Object, "spec", "width"); width != 2 {
			return fmt.Errorf("v2 spec.width = %d, want 2", width)
		}
		return nil
	})
}

func TestAPIServerCallsAdmissionWebhooks(t *testing.T) {
	expectWebhooks(t)

	// An update to an invalid size is rejected too, with our message.
	ctx := t.Context()
	dc := dynamicClient(t)
	name := uniqueName("update")
	var created *unstructured.Unstructured
	eventually(t, func() (err error) {
		created, err = dc.Resource(widgetsV1).Namespace("default").Create(ctx, widget("test.kubeloop.dev/v1", name, map[string]any{"size": int64(1), "color": "green"}), metav1.CreateOptions{})
		return err
	})
	color, _, _ := unstructured.NestedString(created.Object, "spec", "color")
	assert.Equal(t, "green", color, "a set color is not defaulted")
	require.NoError(t, unstructured.SetNestedField(created.Object, int64(-5), "spec", "size"))
	_, err := dc.Resource(widgetsV1).Namespace("default").Update(ctx, created, metav1.UpdateOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.size must not be negative, got -5")

	assert.Positive(t, metricValue(t, serverRegs, "controller_runtime_webhook_requests_total", "webhook", webhook.MutatePath(testwidget.V1Kind), "code", "200"))
	assert.Positive(t, metricValue(t, serverRegs, "controller_runtime_webhook_requests_total", "webhook", webhook.ValidatePath(testwidget.V1Kind), "code", "200"))
}

// warnings collects the API server's warnings.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func TestRawHandlerOnConfigMaps(t *testing.T) {
	ctx := t.Context()
	var seen warnings
	c := rest.CopyConfig(cfg)
	c.WarningHandler = &seen
	cs, err := kubernetes.NewForConfig(c)
	require.NoError(t, err)
	ns := uniqueName("cm")
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{cmLabel: "true"}}}, metav1.CreateOptions{})
	require.NoError(t, err)

	eventually(t, func() error {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("bad")}, Data: map[string]string{"forbidden": "x"}}, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), `denied the request: the key "forbidden" is not allowed here`) {
			return fmt.Errorf("want our denial, got %v", err)
		}
		return nil
	})
	name := uniqueName("good")
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"ok": "y"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	seen.mu.Lock()
	defer seen.mu.Unlock()
	var warning string
	for _, w := range seen.list {
		if strings.HasPrefix(w, "configmap "+name+" checked for ") {
			warning = w
		}
	}
	require.NotEmpty(t, warning, "the handler's warning reaches the client; got %q", seen.list)
	assert.NotEqual(t, "configmap "+name+" checked for ", warning, "RequestFromContext gave the handler the request's user")
}

func TestConversionRoundTrip(t *testing.T) {
	ctx := t.Context()
	dc := dynamicClient(t)
	name := uniqueName("convert")
	eventually(t, func() error {
		_, err := dc.Resource(widgetsV1).Namespace("default").Create(ctx, widget("test.kubeloop.dev/v1", name, map[string]any{"size": int64(3), "color": "red"}), metav1.CreateOptions{})
		return err
	})

	var v2 *unstructured.Unstructured
	eventually(t, func() (err error) {
		v2, err = dc.Resource(widgetsV2).Namespace("default").Get(ctx, name, metav1.GetOptions{})
		return err
	})
	assert.Equal(t, "test.kubeloop.dev/v2", v2.GetAPIVersion())
	width, _, _ := unstructured.NestedInt64(v2.Object, "spec", "width")
	assert.Equal(t, int64(3), width)
	_, hasSize, _ := unstructured.NestedFieldNoCopy(v2.Object, "spec", "size")
	assert.False(t, hasSize, "v2 has no size field")

	require.NoError(t, unstructured.SetNestedField(v2.Object, int64(5), "spec", "width"))
	_, err := dc.Resource(widgetsV2).Namespace("default").Update(ctx, v2, metav1.UpdateOptions{})
	require.NoError(t, err)

	v1, err := dc.Resource(widgetsV1).Namespace("default").Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	size, _, _ := unstructured.NestedInt64(v1.Object, "spec", "size")
	color, _, _ := unstructured.NestedString(v1.Object, "spec", "color")
	assert.Equal(t, int64(5), size, "the v2 update is stored as v1")
	assert.Equal(t, "red", color)

	// A list in v2 converts every item in one review.
	list, err := dc.Resource(widgetsV2).Namespace("default").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, list.Items)
	for _, item := range list.Items {
		assert.Equal(t, "test.kubeloop.dev/v2", item.GetAPIVersion())
	}
	assert.Positive(t, metricValue(t, serverRegs, "controller_runtime_webhook_requests_total", "webhook", webhook.ConvertPath, "code", "200"))
}

// TestCertificateRotation runs after the other integration tests (source
// order); they would pass after it too, as it leaves everything configured
// for the new CA. It swaps the serving certificate for
// one signed by a new CA while the server runs.
func TestCertificateRotation(t *testing.T) {
	expectWebhooks(t)

	ca := webhook.NewCertAuthority("rotated-ca")
	c, k, serial := ca.Serving()
	require.NoError(t, webhook.WritePair(certPath, c, k))
	require.NoError(t, configureAPIServer(context.WithoutCancel(t.Context()), ca.PEM))

	eventually(t, func() error {
		got, err := webhook.PeerSerial(server.Addr(), ca.Pool())
		if err != nil {
			return err
		}
		if got.Cmp(serial) != 0 {
			return fmt.Errorf("serving serial %s, want %s", got, serial)
		}
		return nil
	})
	_, err := webhook.PeerSerial(server.Addr(), x509.NewCertPool())
	assert.Error(t, err, "a client trusting nothing is refused: TLS is verified")

	// The API server, now trusting only the new CA, still reaches every
	// webhook: the server picked up the new pair without a restart.
	expectWebhooks(t)
}
