package client_test

import (
	"net/http"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/controllerutil"
)

// contentTypes records the Content-Type of every response by path.
type contentTypes struct {
	mu   sync.Mutex
	seen map[string]string
}

func (c *contentTypes) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			c.mu.Lock()
			c.seen[req.URL.Path] = resp.Header.Get("Content-Type")
			c.mu.Unlock()
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestWireFormat(t *testing.T) {
	ct := &contentTypes{seen: map[string]string{}}
	cfg := rest.CopyConfig(restConfig)
	cfg.WrapTransport = ct.wrap
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	ctx := t.Context()
	ns := newNamespace(t, ctx, c)

	require.NoError(t, c.Create(ctx, newConfigMap(ns, "wire", map[string]string{"a": "b"})))
	var cm corev1.ConfigMap
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "wire"}, &cm))
	assert.Equal(t, "b", cm.Data["a"])
	require.NoError(t, c.Create(ctx, newWidget(ns, "wire")))
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "wire"}, newWidget("", "")))

	ct.mu.Lock()
	defer ct.mu.Unlock()
	assert.Equal(t, "application/vnd.kubernetes.protobuf", ct.seen["/api/v1/namespaces/"+ns+"/configmaps/wire"], "built-in kinds travel as protobuf")
	assert.Equal(t, "application/json", ct.seen["/apis/test.kubeloop.dev/v1/namespaces/"+ns+"/widgets/wire"], "custom resources travel as JSON")
}

func TestLazyRESTMapperFindsCRDInstalledLater(t *testing.T) {
	c, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ctx := t.Context()
	ns := newNamespace(t, ctx, c)
	gadgetGVK := schema.GroupVersionKind{Group: "late.kubeloop.dev", Version: "v1", Kind: "Gadget"}
	gadget := &unstructured.Unstructured{}
	gadget.SetGroupVersionKind(gadgetGVK)
	gadget.SetNamespace(ns)
	gadget.SetName("g1")

	err = c.Create(ctx, gadget.DeepCopy())
	require.Error(t, err)
	assert.True(t, meta.IsNoMatchError(err), "before the CRD exists: %v", err)
	assert.ErrorContains(t, err, "create late.kubeloop.dev/v1, Kind=Gadget "+ns+"/g1: ")

	data, err := os.ReadFile("testdata/late/gadgets.yaml")
	require.NoError(t, err)
	crd := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal(data, &crd.Object))
	require.NoError(t, testEnv.InstallCRDs(ctx, crd))

	require.NoError(t, c.Create(ctx, gadget), "the mapper refreshes the group on a miss")
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(gadgetGVK)
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(gadget), got))
	assert.Equal(t, gadget.GetUID(), got.GetUID())
}

// controllerutil's create-or-patch against the real API server: spec and
// status changes go to the right endpoints.
func TestCreateOrPatchAgainstAPIServer(t *testing.T) {
	c, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ctx := t.Context()
	ns := newNamespace(t, ctx, c)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	steps := []struct {
		replicas int32
		observed int64
		want     controllerutil.OperationResult
	}{
		{replicas: 1, want: controllerutil.OperationResultCreated},
		{replicas: 1, want: controllerutil.OperationResultNone},
		{replicas: 2, want: controllerutil.OperationResultUpdated},
		{replicas: 2, observed: 5, want: controllerutil.OperationResultUpdatedStatusOnly},
		{replicas: 3, observed: 6, want: controllerutil.OperationResultUpdatedStatus},
	}
	for i, st := range steps {
		got, err := controllerutil.CreateOrPatch(ctx, c, d, func() error {
			if d.CreationTimestamp.IsZero() {
				// Set the template once: the server defaults fields in it,
				// so replacing it every time would always be a change.
				template := newDeployment(ns, "web")
				d.Spec.Selector = template.Spec.Selector
				d.Spec.Template = template.Spec.Template
			}
			d.Spec.Replicas = &st.replicas
			if st.observed != 0 {
				d.Status.ObservedGeneration = st.observed
			}
			return nil
		})
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, st.want, got, "step %d", i)
	}
	var stored appsv1.Deployment
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(d), &stored))
	assert.Equal(t, int32(3), *stored.Spec.Replicas)
	assert.Equal(t, int64(6), stored.Status.ObservedGeneration)
}
