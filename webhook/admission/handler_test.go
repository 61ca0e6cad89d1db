package admission_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/webhook/admission"
)

const cmJSON = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns"},"data":{"k":"v"}}`

func TestDecoder(t *testing.T) {
	dec := admission.NewDecoder(coreScheme(t))
	var req admission.Request
	req.Operation = admissionv1.Update
	req.Kind = metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	req.Namespace, req.Name = "ns", "cm"
	req.Object.Raw = []byte(cmJSON)
	req.OldObject.Raw = []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns"},"data":{"k":"old"}}`)

	cm := &corev1.ConfigMap{}
	require.NoError(t, dec.Decode(req, cm))
	assert.Equal(t, "v", cm.Data["k"])
	old := &corev1.ConfigMap{}
	require.NoError(t, dec.DecodeRaw(req.OldObject, old))
	assert.Equal(t, "old", old.Data["k"])

	// Unstructured takes the JSON as it is, even without apiVersion and kind.
	u := &unstructured.Unstructured{}
	require.NoError(t, dec.DecodeRaw(runtime.RawExtension{Raw: []byte(`{"metadata":{"name":"bare"}}`)}, u))
	assert.Equal(t, "bare", u.GetName())

	var del admission.Request
	del.Operation, del.Kind.Kind, del.Namespace, del.Name = admissionv1.Delete, "ConfigMap", "ns", "gone"
	assert.ErrorContains(t, dec.Decode(del, &corev1.ConfigMap{}), "DELETE request for ConfigMap ns/gone has no object")
	assert.ErrorContains(t, dec.DecodeRaw(runtime.RawExtension{}, &corev1.ConfigMap{}), "no object to decode into *v1.ConfigMap")
	assert.ErrorContains(t, dec.DecodeRaw(runtime.RawExtension{Raw: []byte(`{"data":`)}, &corev1.ConfigMap{}), "decode into *v1.ConfigMap")
	assert.ErrorContains(t, dec.DecodeRaw(runtime.RawExtension{Raw: []byte(`[`)}, u), "decode into *unstructured.Unstructured")
	assert.ErrorContains(t, dec.DecodeRaw(runtime.RawExtension{Raw: []byte(cmJSON)}, nil), "nil object")
	assert.ErrorContains(t, dec.DecodeRaw(runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Secret"}`)}, &corev1.ConfigMap{}), "decode into *v1.ConfigMap")

	noScheme := admission.NewDecoder(nil)
	assert.ErrorContains(t, noScheme.Decode(req, &corev1.ConfigMap{}), "no scheme")
	require.NoError(t, noScheme.Decode(req, u), "unstructured needs no scheme")
	assert.Equal(t, "cm", u.GetName())
}

// TestHandle calls a Webhook without HTTP, as controller-runtime's tests
// of handlers do, and checks what the Handler's context carries.
func TestHandle(t *testing.T) {
	var logged []string
	base := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	var fromCtx admission.Request
	wh := &admission.Webhook{
		Handler: admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
			var err error
			fromCtx, err = admission.RequestFromContext(ctx)
			require.NoError(t, err)
			logr.FromContextOrDiscard(ctx).Info("handling")
			return admission.Patched("", admission.PatchOperation{Op: "add", Path: "/data/x", Value: "1"})
		}),
		LogConstructor: func(base logr.Logger, req *admission.Request) logr.Logger {
			return base.WithValues("custom", req.Name)
		},
	}
	var req admission.Request
	req.UID, req.Name = "u-7", "cm"
	resp := wh.Handle(logr.NewContext(context.Background(), base), req)
	assert.Equal(t, types.UID("u-7"), resp.UID)
	assert.Equal(t, "cm", fromCtx.Name)
	require.NotNil(t, resp.PatchType, "Handle completes the answer")
	assert.JSONEq(t, `[{"op":"add","path":"/data/x","value":"1"}]`, string(resp.Patch))
	assert.Equal(t, int32(http.StatusOK), resp.Result.Code)
	require.NotEmpty(t, logged)
	assert.Contains(t, logged[0], `"custom"="cm"`)

	_, err := admission.RequestFromContext(context.Background())
	assert.ErrorContains(t, err, "no admission.Request")
}

func TestDefaultLogConstructor(t *testing.T) {
	var logged string
	base := funcr.New(func(_, args string) { logged = args }, funcr.Options{})
	var req admission.Request
	req.UID, req.Namespace, req.Name, req.Operation = "u", "ns", "cm", admissionv1.Create
	req.UserInfo = authenticationv1.UserInfo{Username: "alice"}
	admission.DefaultLogConstructor(base, &req).Info("x")
	for _, kv := range []string{`"uid"="u"`, `"namespace"="ns"`, `"name"="cm"`, `"operation"="CREATE"`, `"user"="alice"`} {
		assert.Contains(t, logged, kv)
	}
	assert.Equal(t, base, admission.DefaultLogConstructor(base, nil))
}

func TestRecoverPanicFalseLetsThePanicThrough(t *testing.T) {
	wh := (&admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		panic("boom")
	})}).WithRecoverPanic(false)
	assert.PanicsWithValue(t, "boom", func() { wh.Handle(context.Background(), admission.Request{}) })
	wh.WithRecoverPanic(true)
	var resp admission.Response
	require.NotPanics(t, func() { resp = wh.Handle(context.Background(), admission.Request{}) })
	assert.Equal(t, int32(http.StatusInternalServerError), resp.Result.Code)
}

type ctxKey struct{}

func TestWithContextFunc(t *testing.T) {
	wh := &admission.Webhook{
		Handler: admission.HandlerFunc(func(ctx context.Context, _ admission.Request) admission.Response {
			return admission.Allowed(ctx.Value(ctxKey{}).(string))
		}),
		WithContextFunc: func(ctx context.Context, r *http.Request) context.Context {
			return context.WithValue(ctx, ctxKey{}, r.Header.Get("X-Tenant"))
		},
	}
	r := httptest.NewRequest(http.MethodPost, "/v", bytes.NewReader(reviewBody(t, admissionv1.AdmissionRequest{UID: "u"})))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Tenant", "blue")
	w := httptest.NewRecorder()
	wh.ServeHTTP(w, r)
	var out admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out))
	assert.Equal(t, "blue", out.Response.Result.Message)
}

func TestResponseComplete(t *testing.T) {
	var req admission.Request
	req.UID = "u-9"
	r := admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: true}}
	require.NoError(t, r.Complete(req))
	assert.Equal(t, types.UID("u-9"), r.UID)
	assert.Equal(t, int32(http.StatusOK), r.Result.Code)
	assert.Nil(t, r.PatchType, "no patches, no patch type")

	bad := admission.Patched("", admission.PatchOperation{Op: "add", Path: "/x", Value: math.Inf(1)})
	assert.Error(t, bad.Complete(req), "a value JSON cannot hold")
	wh := &admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response { return bad })}
	resp := wh.Handle(context.Background(), req)
	assert.False(t, resp.Allowed)
	assert.Equal(t, types.UID("u-9"), resp.UID)
	assert.Contains(t, resp.Result.Message, "encode patch")
}

func TestMultiHandlers(t *testing.T) {
	patch := func(path string, warn string) admission.Handler {
		return admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
			return admission.Patched("", admission.PatchOperation{Op: "add", Path: path, Value: 1}).WithWarnings(warn)
		})
	}
	deny := admission.HandlerFunc(func(context.Context, admission.Request) admission.Response { return admission.Denied("no") })
	allow := func(warn string) admission.Handler {
		return admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
			return admission.Allowed("").WithWarnings(warn)
		})
	}
	ctx := context.Background()

	resp := admission.MultiMutatingHandler(patch("/a", "w1"), patch("/b", "w2")).Handle(ctx, admission.Request{})
	assert.True(t, resp.Allowed)
	assert.Equal(t, []admission.PatchOperation{{Op: "add", Path: "/a", Value: 1}, {Op: "add", Path: "/b", Value: 1}}, resp.Patches)
	assert.Equal(t, []string{"w1", "w2"}, resp.Warnings)

	resp = admission.MultiMutatingHandler(patch("/a", "w1"), deny, patch("/b", "w2")).Handle(ctx, admission.Request{})
	assert.False(t, resp.Allowed)
	assert.Equal(t, "no", resp.Result.Message)

	merge := admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		r := admission.Allowed("")
		pt := admissionv1.PatchType("MergePatch")
		r.PatchType = &pt
		return r
	})
	resp = admission.MultiMutatingHandler(merge).Handle(ctx, admission.Request{})
	assert.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, "patch type MergePatch")

	resp = admission.MultiValidatingHandler(allow("v1"), allow("v2")).Handle(ctx, admission.Request{})
	assert.True(t, resp.Allowed)
	assert.Equal(t, []string{"v1", "v2"}, resp.Warnings)
	resp = admission.MultiValidatingHandler(allow("v1"), deny).Handle(ctx, admission.Request{})
	assert.False(t, resp.Allowed)
}
