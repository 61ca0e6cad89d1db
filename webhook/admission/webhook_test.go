package admission_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/webhook/admission"
	"github.com/kubeloop/kubeloop/webhook/internal/serving"
)

// reviewBody encodes an admission.k8s.io/v1 AdmissionReview carrying req.
func reviewBody(t *testing.T, req admissionv1.AdmissionRequest) []byte {
	t.Helper()
	data, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  &req,
	})
	require.NoError(t, err)
	return data
}

// serve sends body to h and decodes the answer.
func serve(t *testing.T, h http.Handler, method, contentType string, body io.Reader) (int, admissionv1.AdmissionReview) {
	t.Helper()
	r := httptest.NewRequest(method, "/validate", body)
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var out admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out), "answer: %s", w.Body.String())
	require.NotNil(t, out.Response)
	return w.Code, out
}

// infinite is a body that never ends.
type infinite struct{}

func (infinite) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

func TestWebhookRejectsBadRequests(t *testing.T) {
	called := false
	wh := &admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		called = true
		return admission.Allowed("")
	})}
	tests := []struct {
		name        string
		method      string
		contentType string
		body        io.Reader
		wantCode    int
		wantMessage string
	}{
		{"empty body", http.MethodPost, "application/json", strings.NewReader(""), 400, "empty request body"},
		{"no body", http.MethodPost, "application/json", http.NoBody, 400, "empty request body"},
		{"wrong content type", http.MethodPost, "text/plain", strings.NewReader("{}"), 400, `content type "text/plain"`},
		{"no content type", http.MethodPost, "", strings.NewReader("{}"), 400, "content type"},
		{"not a POST", http.MethodGet, "application/json", http.NoBody, 405, "method GET"},
		{"malformed JSON", http.MethodPost, "application/json", strings.NewReader(`{"request":`), 400, "decode AdmissionReview"},
		{"not an AdmissionReview", http.MethodPost, "application/json", strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap"}`), 400, `got apiVersion "v1" kind "ConfigMap"`},
		{"v1beta1 review", http.MethodPost, "application/json", strings.NewReader(`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{}}`), 400, "want an admission.k8s.io/v1 AdmissionReview"},
		{"no request", http.MethodPost, "application/json", strings.NewReader(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`), 400, "has no request"},
		{"oversized body", http.MethodPost, "application/json", io.LimitReader(infinite{}, admission.MaxRequestBytes+1), 413, "larger than 7340032 bytes"},
		{"infinite body", http.MethodPost, "application/json; charset=utf-8", infinite{}, 413, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := serve(t, wh, tt.method, tt.contentType, tt.body)
			assert.Equal(t, tt.wantCode, code)
			assert.False(t, out.Response.Allowed)
			require.NotNil(t, out.Response.Result)
			assert.Equal(t, int32(tt.wantCode), out.Response.Result.Code)
			assert.Contains(t, out.Response.Result.Message, tt.wantMessage)
		})
	}
	assert.False(t, called, "the handler never sees a bad request")
}

func TestWebhookAnswersWithUIDAndPatch(t *testing.T) {
	wh := &admission.Webhook{Handler: admission.HandlerFunc(func(_ context.Context, req admission.Request) admission.Response {
		return admission.Patched("ok", admission.PatchOperation{Op: "add", Path: "/metadata/labels", Value: map[string]string{"a": "b"}}).
			WithWarnings("careful")
	})}
	code, out := serve(t, wh, http.MethodPost, "application/json", bytes.NewReader(reviewBody(t, admissionv1.AdmissionRequest{UID: "u-1"})))
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, types.UID("u-1"), out.Response.UID)
	assert.True(t, out.Response.Allowed)
	require.NotNil(t, out.Response.PatchType)
	assert.Equal(t, admissionv1.PatchTypeJSONPatch, *out.Response.PatchType)
	assert.JSONEq(t, `[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]`, string(out.Response.Patch))
	assert.Equal(t, []string{"careful"}, out.Response.Warnings)
	assert.Equal(t, "admission.k8s.io/v1", out.APIVersion)
}

func TestWebhookRecoversFromPanic(t *testing.T) {
	wh := &admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		panic("secret internals")
	})}
	var recorded []any
	r := httptest.NewRequest(http.MethodPost, "/v", bytes.NewReader(reviewBody(t, admissionv1.AdmissionRequest{UID: "u-2"})))
	r.Header.Set("Content-Type", "application/json")
	r = r.WithContext(serving.WithPanicRecorder(r.Context(), func(v any) { recorded = append(recorded, v) }))
	w := httptest.NewRecorder()
	require.NotPanics(t, func() { wh.ServeHTTP(w, r) })

	var out admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
	require.NotNil(t, out.Response)
	assert.Equal(t, types.UID("u-2"), out.Response.UID)
	assert.False(t, out.Response.Allowed)
	assert.Equal(t, int32(500), out.Response.Result.Code)
	assert.NotContains(t, out.Response.Result.Message, "secret internals", "the panic value stays in the log")
	assert.Equal(t, []any{"secret internals"}, recorded, "the panic is reported for counting")
}

func TestNilHandlerIsA500(t *testing.T) {
	_, out := serve(t, &admission.Webhook{}, http.MethodPost, "application/json", bytes.NewReader(reviewBody(t, admissionv1.AdmissionRequest{UID: "u"})))
	assert.False(t, out.Response.Allowed)
	assert.Equal(t, int32(500), out.Response.Result.Code)
}

func TestResponses(t *testing.T) {
	tests := []struct {
		name        string
		give        admission.Response
		wantAllowed bool
		wantCode    int32
	}{
		{"allowed", admission.Allowed("fine"), true, 200},
		{"denied", admission.Denied("no"), false, 403},
		{"errored", admission.Errored(400, assert.AnError), false, 400},
		{"validation denied", admission.ValidationResponse(false, "no"), false, 403},
		{"patched", admission.Patched("", admission.PatchOperation{Op: "remove", Path: "/a"}), true, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantAllowed, tt.give.Allowed)
			assert.Equal(t, tt.wantCode, tt.give.Result.Code)
		})
	}
}

func TestPatchResponseFromRaw(t *testing.T) {
	resp := admission.PatchResponseFromRaw([]byte(`{"a":1}`), []byte(`{"a":2}`))
	assert.True(t, resp.Allowed)
	assert.Equal(t, []admission.PatchOperation{{Op: "replace", Path: "/a", Value: json.Number("2")}}, resp.Patches)

	bad := admission.PatchResponseFromRaw([]byte(`{`), []byte(`{}`))
	assert.False(t, bad.Allowed)
	assert.Equal(t, int32(500), bad.Result.Code)
}

func TestRemoveOperationHasNoValue(t *testing.T) {
	data, err := json.Marshal(admission.PatchOperation{Op: "remove", Path: "/a", Value: "ignored"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"op":"remove","path":"/a"}`, string(data))
}

// configMapRequest is a request for a ConfigMap with the given data.
func configMapRequest(t *testing.T, op admissionv1.Operation, obj, old *corev1.ConfigMap) admissionv1.AdmissionRequest {
	t.Helper()
	req := admissionv1.AdmissionRequest{
		UID:       "uid-cm",
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Namespace: "ns", Name: "cm",
		Operation: op,
	}
	enc := func(cm *corev1.ConfigMap) runtime.RawExtension {
		if cm == nil {
			return runtime.RawExtension{}
		}
		cm = cm.DeepCopy()
		cm.APIVersion, cm.Kind = "v1", "ConfigMap"
		data, err := json.Marshal(cm)
		require.NoError(t, err)
		return runtime.RawExtension{Raw: data}
	}
	req.Object, req.OldObject = enc(obj), enc(old)
	return req
}
