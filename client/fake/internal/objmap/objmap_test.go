package objmap_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeloop/kubeloop/client/fake/internal/objmap"
)

var cmGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

func TestRoundTrip(t *testing.T) {
	give := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"app": "web"}},
		Data: map[string]string{"k": "v"}}
	m, err := objmap.ToMap(give, cmGVK)
	require.NoError(t, err)
	assert.Equal(t, "v1", m["apiVersion"])
	assert.Equal(t, "ConfigMap", m["kind"])

	var typed corev1.ConfigMap
	require.NoError(t, objmap.Into(m, &typed, cmGVK))
	assert.Equal(t, give.Data, typed.Data)
	assert.Empty(t, typed.Kind, "typed objects come back without apiVersion and kind")

	var u unstructured.Unstructured
	require.NoError(t, objmap.Into(m, &u, cmGVK))
	assert.Equal(t, "ConfigMap", u.GetKind())
	u.SetLabels(map[string]string{"app": "changed"})
	assert.Equal(t, "web", objmap.Meta(m).GetLabels()["app"], "the caller's copy does not alias the stored map")

	var pm metav1.PartialObjectMetadata
	require.NoError(t, objmap.Into(m, &pm, cmGVK))
	assert.Equal(t, "a", pm.Name)
	assert.Equal(t, cmGVK, pm.GroupVersionKind(), "metadata-only objects keep their kind")

	back, err := objmap.ToMap(&pm, cmGVK)
	require.NoError(t, err)
	assert.NotContains(t, back, "data", "a metadata-only object stores only metadata")
}

func TestItemAndTyped(t *testing.T) {
	s := clientgoscheme.Scheme
	for _, tt := range []struct {
		name string
		list runtime.Object
		want any
	}{
		{name: "typed", list: &corev1.ConfigMapList{}, want: &corev1.ConfigMap{}},
		{name: "unstructured", list: &unstructured.UnstructuredList{}, want: &unstructured.Unstructured{}},
		{name: "metadata", list: &metav1.PartialObjectMetadataList{}, want: &metav1.PartialObjectMetadata{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			item, err := objmap.Item(s, tt.list, cmGVK)
			require.NoError(t, err)
			assert.IsType(t, tt.want, item)
		})
	}
	m := map[string]any{"metadata": map[string]any{"name": "a"}, "data": map[string]any{"k": "v"}}
	obj, err := objmap.Typed(s, cmGVK, m)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"k": "v"}, obj.(*corev1.ConfigMap).Data)
	obj, err = objmap.Typed(s, schema.GroupVersionKind{Group: "x.dev", Version: "v1", Kind: "Unknown"}, m)
	require.NoError(t, err)
	assert.IsType(t, &unstructured.Unstructured{}, obj, "a kind the scheme does not know")
}

func TestPatch(t *testing.T) {
	old := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "a"}, "spec": map[string]any{
		"containers": []any{map[string]any{"name": "c", "image": "v1"}}}}
	tests := []struct {
		name     string
		pt       types.PatchType
		data     string
		builtIn  bool
		want     any // spec.containers[0].image
		wantCode int32
	}{
		{name: "merge", pt: types.MergePatchType, data: `{"spec":{"containers":[{"name":"c","image":"v2"}]}}`, want: "v2"},
		{name: "json", pt: types.JSONPatchType, data: `[{"op":"replace","path":"/spec/containers/0/image","value":"v3"}]`, want: "v3"},
		{name: "strategic", pt: types.StrategicMergePatchType, builtIn: true, data: `{"spec":{"containers":[{"name":"c","image":"v4"}]}}`, want: "v4"},
		{name: "strategic on a custom kind", pt: types.StrategicMergePatchType, data: `{}`, wantCode: 415},
		{name: "json patch that does not apply", pt: types.JSONPatchType, data: `[{"op":"remove","path":"/nope"}]`, wantCode: 422},
		{name: "malformed", pt: types.MergePatchType, data: `{`, wantCode: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var builtIn runtime.Object
			if tt.builtIn {
				builtIn = &corev1.Pod{}
			}
			got, err := objmap.Patch(old, tt.pt, []byte(tt.data), builtIn)
			if tt.wantCode != 0 {
				var status apierrors.APIStatus
				require.ErrorAs(t, err, &status)
				assert.Equal(t, tt.wantCode, status.Status().Code, "%v", err)
				return
			}
			require.NoError(t, err)
			c := got["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			assert.Equal(t, tt.want, c["image"])
			assert.Equal(t, "v1", old["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"], "old is not changed")
		})
	}
}
