package admission_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/webhook/admission"
)

func coreScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(s))
	return s
}

func post(t *testing.T, h http.Handler, req admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	code, out := serve(t, h, http.MethodPost, "application/json", bytes.NewReader(reviewBody(t, req)))
	require.Equal(t, http.StatusOK, code)
	return out.Response
}

// cmValidator rejects ConfigMaps with a "forbidden" key and forbids
// deleting "keep".
type cmValidator struct{}

func (cmValidator) ValidateCreate(_ context.Context, cm *corev1.ConfigMap) (admission.Warnings, error) {
	if _, ok := cm.Data["forbidden"]; ok {
		return admission.Warnings{"saw forbidden"}, errors.New(`key "forbidden" is not allowed`)
	}
	return admission.Warnings{"created " + cm.Name}, nil
}

func (cmValidator) ValidateUpdate(_ context.Context, old, cm *corev1.ConfigMap) (admission.Warnings, error) {
	if old.Data["immutable"] != cm.Data["immutable"] {
		return nil, apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, cm.Name, nil)
	}
	return nil, nil
}

func (cmValidator) ValidateDelete(_ context.Context, cm *corev1.ConfigMap) (admission.Warnings, error) {
	if cm.Name == "keep" {
		return nil, errors.New("keep stays")
	}
	return nil, nil
}

func TestWithValidator(t *testing.T) {
	wh := admission.WithValidator[*corev1.ConfigMap](coreScheme(t), cmValidator{})
	cm := func(name string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Data: data}
	}
	tests := []struct {
		name         string
		give         admissionv1.AdmissionRequest
		wantAllowed  bool
		wantCode     int32
		wantMessage  string
		wantWarnings []string
	}{
		{"create allowed", configMapRequest(t, admissionv1.Create, cm("a", nil), nil), true, 200, "", []string{"created a"}},
		{"create denied", configMapRequest(t, admissionv1.Create, cm("a", map[string]string{"forbidden": "x"}), nil), false, 403, `key "forbidden" is not allowed`, []string{"saw forbidden"}},
		{"update allowed", configMapRequest(t, admissionv1.Update, cm("a", map[string]string{"x": "1"}), cm("a", nil)), true, 200, "", nil},
		{"update denied with API status", configMapRequest(t, admissionv1.Update, cm("a", map[string]string{"immutable": "2"}), cm("a", nil)), false, 422, "is invalid", nil},
		{"delete denied", configMapRequest(t, admissionv1.Delete, nil, cm("keep", nil)), false, 403, "keep stays", nil},
		{"delete allowed", configMapRequest(t, admissionv1.Delete, nil, cm("other", nil)), true, 200, "", nil},
		{"connect allowed", configMapRequest(t, admissionv1.Connect, nil, nil), true, 200, "", nil},
		{"create without object", configMapRequest(t, admissionv1.Create, nil, nil), false, 400, "CREATE request for ConfigMap ns/cm has no object", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(t, wh, tt.give)
			assert.Equal(t, tt.wantAllowed, resp.Allowed)
			assert.Equal(t, tt.wantCode, resp.Result.Code)
			assert.Contains(t, resp.Result.Message, tt.wantMessage)
			assert.Equal(t, tt.wantWarnings, resp.Warnings)
		})
	}
}

func TestTypedWebhookRejectsOtherKinds(t *testing.T) {
	wh := admission.WithValidator[*corev1.ConfigMap](coreScheme(t), cmValidator{})
	req := configMapRequest(t, admissionv1.Create, &corev1.ConfigMap{}, nil)
	req.Kind = metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	resp := post(t, wh, req)
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(400), resp.Result.Code)
	assert.Equal(t, "admission: this webhook serves v1, Kind=ConfigMap; the request is for apps/v1, Kind=Deployment", resp.Result.Message)
}

func TestTypedWebhookRejectsUndecodableObject(t *testing.T) {
	wh := admission.WithValidator[*corev1.ConfigMap](coreScheme(t), cmValidator{})
	req := configMapRequest(t, admissionv1.Create, &corev1.ConfigMap{}, nil)
	req.Object.Raw = []byte(`{"apiVersion":"v1","kind":"ConfigMap","data":"not a map"}`)
	resp := post(t, wh, req)
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(400), resp.Result.Code)
	assert.Contains(t, resp.Result.Message, "decode ConfigMap ns/cm")
}

func TestTypedWebhookOfUnregisteredType(t *testing.T) {
	wh := admission.WithValidator[*corev1.ConfigMap](runtime.NewScheme(), cmValidator{})
	resp := post(t, wh, configMapRequest(t, admissionv1.Create, &corev1.ConfigMap{}, nil))
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(500), resp.Result.Code)
	assert.Contains(t, resp.Result.Message, "ConfigMap")
}

func TestWithDefaulter(t *testing.T) {
	d := admission.DefaulterFunc[*corev1.ConfigMap](func(_ context.Context, cm *corev1.ConfigMap) error {
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		cm.Labels["defaulted"] = "true"
		if cm.Data["reject"] != "" {
			return errors.New("rejected by the defaulter")
		}
		return nil
	})
	wh := admission.WithDefaulter[*corev1.ConfigMap](coreScheme(t), d)

	t.Run("patch adds the label and keeps unknown fields", func(t *testing.T) {
		req := configMapRequest(t, admissionv1.Create, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"},
			Data:       map[string]string{"k": "v"},
		}, nil)
		// A field from a newer API version that the Go type does not know.
		var obj map[string]any
		require.NoError(t, json.Unmarshal(req.Object.Raw, &obj))
		obj["futureField"] = "kept"
		raw, err := json.Marshal(obj)
		require.NoError(t, err)
		req.Object.Raw = raw

		resp := post(t, wh, req)
		require.True(t, resp.Allowed, "%v", resp.Result)
		assert.JSONEq(t, `[{"op":"add","path":"/metadata/labels","value":{"defaulted":"true"}}]`, string(resp.Patch))
		patch, err := jsonpatch.DecodePatch(resp.Patch)
		require.NoError(t, err)
		patched, err := patch.Apply(raw)
		require.NoError(t, err)
		var got map[string]any
		require.NoError(t, json.Unmarshal(patched, &got))
		assert.Equal(t, "kept", got["futureField"])
		assert.Equal(t, map[string]any{"defaulted": "true"}, got["metadata"].(map[string]any)["labels"])
	})
	t.Run("nothing to change means no patch", func(t *testing.T) {
		req := configMapRequest(t, admissionv1.Update, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns", Labels: map[string]string{"defaulted": "true"}},
		}, &corev1.ConfigMap{})
		resp := post(t, wh, req)
		assert.True(t, resp.Allowed)
		assert.Nil(t, resp.Patch)
		assert.Nil(t, resp.PatchType)
	})
	t.Run("an error denies", func(t *testing.T) {
		req := configMapRequest(t, admissionv1.Create, &corev1.ConfigMap{Data: map[string]string{"reject": "y"}}, nil)
		resp := post(t, wh, req)
		assert.False(t, resp.Allowed)
		assert.Equal(t, "rejected by the defaulter", resp.Result.Message)
	})
	t.Run("delete is allowed untouched", func(t *testing.T) {
		resp := post(t, wh, configMapRequest(t, admissionv1.Delete, nil, &corev1.ConfigMap{}))
		assert.True(t, resp.Allowed)
		assert.Nil(t, resp.Patch)
	})
}

func TestDefaulterOnUnstructured(t *testing.T) {
	wh := admission.WithDefaulter[*unstructured.Unstructured](nil, admission.DefaulterFunc[*unstructured.Unstructured](
		func(_ context.Context, u *unstructured.Unstructured) error {
			return unstructured.SetNestedField(u.Object, int64(3), "spec", "replicas")
		}))
	req := admissionv1.AdmissionRequest{
		UID: "u", Operation: admissionv1.Create,
		Kind:   metav1.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Anything"},
		Object: runtime.RawExtension{Raw: []byte(`{"apiVersion":"example.com/v1","kind":"Anything","metadata":{"name":"a"},"spec":{"x":1}}`)},
	}
	resp := post(t, wh, req)
	require.True(t, resp.Allowed, "%v", resp.Result)
	assert.JSONEq(t, `[{"op":"add","path":"/spec/replicas","value":3}]`, string(resp.Patch))
}
