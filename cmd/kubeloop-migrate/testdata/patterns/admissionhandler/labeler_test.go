package admissionhandler

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
)

func review(t *testing.T, obj, old *corev1.ConfigMap) *admissionv1.AdmissionResponse {
	t.Helper()
	raw := func(o *corev1.ConfigMap) runtime.RawExtension {
		if o == nil {
			return runtime.RawExtension{}
		}
		o.APIVersion, o.Kind = "v1", "ConfigMap"
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: b}
	}
	op := admissionv1.Create
	if old != nil {
		op = admissionv1.Update
	}
	in := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID("uid-1"),
			Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"},
			Name:      obj.Name,
			Namespace: "default",
			Operation: op,
			Object:    raw(obj),
			OldObject: raw(old),
		},
	}
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	NewWebhook(scheme.Scheme).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("decode the response %s: %v", rec.Body, err)
	}
	if out.Response == nil || out.Response.UID != "uid-1" {
		t.Fatalf("response %+v does not answer uid-1", out.Response)
	}
	return out.Response
}

func TestLabelerPatchesTheLabel(t *testing.T) {
	resp := review(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}, nil)
	if !resp.Allowed {
		t.Fatalf("denied: %+v", resp.Result)
	}
	if resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
		t.Fatalf("patch type %v, want JSONPatch", resp.PatchType)
	}
	if !strings.Contains(string(resp.Patch), "configmap-labeler") || !strings.Contains(string(resp.Patch), "/metadata/labels") {
		t.Fatalf("patch %s does not add the label", resp.Patch)
	}
}

func TestLabelerDenies(t *testing.T) {
	resp := review(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Data: map[string]string{"forbidden": "x"}}, nil)
	if resp.Allowed {
		t.Fatal("a ConfigMap with a forbidden key was allowed")
	}
	if resp.Result == nil || !strings.Contains(resp.Result.Message, "forbidden") {
		t.Fatalf("result %+v does not say why", resp.Result)
	}

	old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"locked": "true"}}}
	resp = review(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, old)
	if resp.Allowed {
		t.Fatal("an update of a locked ConfigMap was allowed (DecodeRaw of the old object)")
	}
}
