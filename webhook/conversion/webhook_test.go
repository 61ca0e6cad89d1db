package conversion_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/webhook/conversion"
	"github.com/kubeloop/kubeloop/webhook/internal/serving"
	"github.com/kubeloop/kubeloop/webhook/internal/testwidget"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}) }

func widgetScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, testwidget.AddToScheme(s))
	return s
}

func reviewOf(t *testing.T, desired string, objects ...string) []byte {
	t.Helper()
	req := &conversion.Request{UID: "uid-1", DesiredAPIVersion: desired}
	for _, o := range objects {
		req.Objects = append(req.Objects, runtime.RawExtension{Raw: []byte(o)})
	}
	data, err := json.Marshal(conversion.Review{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request:  req,
	})
	require.NoError(t, err)
	return data
}

func send(t *testing.T, h http.Handler, r *http.Request) (int, conversion.Review) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var out conversion.Review
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out), "answer: %s", w.Body.String())
	require.NotNil(t, out.Response)
	return w.Code, out
}

func post(body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/convert", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

const (
	v1Obj = `{"apiVersion":"test.kubeloop.dev/v1","kind":"Widget","metadata":{"name":"a","namespace":"ns","uid":"u1"},"spec":{"size":3,"color":"red"}}`
	v2Obj = `{"apiVersion":"test.kubeloop.dev/v2","kind":"Widget","metadata":{"name":"b","namespace":"ns"},"spec":{"width":5}}`
	v3Obj = `{"apiVersion":"test.kubeloop.dev/v3","kind":"Widget","metadata":{"name":"c"},"spec":{"sizeInCm":7,"color":"blue"}}`
)

func TestConvert(t *testing.T) {
	wh := conversion.NewWebhook(widgetScheme(t))
	tests := []struct {
		name    string
		desired string
		give    []string
		want    []string
	}{
		{"hub to spoke", "test.kubeloop.dev/v2", []string{v1Obj},
			[]string{`{"apiVersion":"test.kubeloop.dev/v2","kind":"Widget","metadata":{"name":"a","namespace":"ns","uid":"u1"},"spec":{"width":3,"color":"red"}}`}},
		{"spoke to hub", "test.kubeloop.dev/v1", []string{v2Obj},
			[]string{`{"apiVersion":"test.kubeloop.dev/v1","kind":"Widget","metadata":{"name":"b","namespace":"ns"},"spec":{"size":5}}`}},
		{"spoke to spoke through the hub", "test.kubeloop.dev/v3", []string{v2Obj},
			[]string{`{"apiVersion":"test.kubeloop.dev/v3","kind":"Widget","metadata":{"name":"b","namespace":"ns"},"spec":{"sizeInCm":5}}`}},
		{"mixed list keeps order, same version untouched", "test.kubeloop.dev/v1", []string{v3Obj, v1Obj},
			[]string{`{"apiVersion":"test.kubeloop.dev/v1","kind":"Widget","metadata":{"name":"c"},"spec":{"size":7,"color":"blue"}}`, v1Obj}},
		{"empty list", "test.kubeloop.dev/v2", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := send(t, wh, post(reviewOf(t, tt.desired, tt.give...)))
			assert.Equal(t, http.StatusOK, code)
			assert.Equal(t, types.UID("uid-1"), out.Response.UID)
			require.Equal(t, metav1.StatusSuccess, out.Response.Result.Status, out.Response.Result.Message)
			require.Len(t, out.Response.ConvertedObjects, len(tt.want))
			for i, want := range tt.want {
				assert.JSONEq(t, want, string(out.Response.ConvertedObjects[i].Raw))
			}
		})
	}
}

func TestConvertFailures(t *testing.T) {
	wh := conversion.NewWebhook(widgetScheme(t))
	tests := []struct {
		name        string
		desired     string
		give        string
		wantMessage string
	}{
		{"conversion error", "test.kubeloop.dev/v1", `{"apiVersion":"test.kubeloop.dev/v3","kind":"Widget","spec":{"sizeInCm":-1}}`, "object 0: test.kubeloop.dev/v3, Kind=Widget to test.kubeloop.dev/v1, Kind=Widget: testwidget: negative size"},
		{"unknown version", "test.kubeloop.dev/v9", v1Obj, "object 0: test.kubeloop.dev/v9, Kind=Widget"},
		{"other group", "other.dev/v1", v1Obj, "groups differ"},
		{"no kind", "test.kubeloop.dev/v1", `{"spec":{}}`, "no apiVersion or kind"},
		{"bad desired version", "a/b/c", v1Obj, `desired API version "a/b/c"`},
		{"undecodable object", "test.kubeloop.dev/v2", `{"apiVersion":"test.kubeloop.dev/v1","kind":"Widget","spec":{"size":"big"}}`, "decode test.kubeloop.dev/v1"},
		{"panic", "test.kubeloop.dev/v3", `{"apiVersion":"test.kubeloop.dev/v1","kind":"Widget","spec":{"color":"panic"}}`, "internal error: a conversion function panicked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var panics int
			r := post(reviewOf(t, tt.desired, tt.give))
			r = r.WithContext(serving.WithPanicRecorder(r.Context(), func(any) { panics++ }))
			code, out := send(t, wh, r)
			assert.Equal(t, http.StatusOK, code)
			assert.Equal(t, types.UID("uid-1"), out.Response.UID)
			assert.Equal(t, metav1.StatusFailure, out.Response.Result.Status)
			assert.Contains(t, out.Response.Result.Message, tt.wantMessage)
			assert.Empty(t, out.Response.ConvertedObjects)
			assert.Equal(t, tt.name == "panic", panics == 1, "panics recorded: %d", panics)
		})
	}
}

func TestConvertRejectsBadRequests(t *testing.T) {
	wh := conversion.NewWebhook(widgetScheme(t))
	tests := []struct {
		name        string
		method      string
		contentType string
		body        io.Reader
		wantCode    int
		wantMessage string
	}{
		{"empty", http.MethodPost, "application/json", strings.NewReader(""), 400, "empty request body"},
		{"wrong content type", http.MethodPost, "application/yaml", strings.NewReader("{}"), 400, "content type"},
		{"not a POST", http.MethodPut, "application/json", strings.NewReader("{}"), 405, "method PUT"},
		{"malformed", http.MethodPost, "application/json", strings.NewReader("[1,"), 400, "decode ConversionReview"},
		{"wrong kind", http.MethodPost, "application/json", strings.NewReader(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`), 400, "want an apiextensions.k8s.io/v1 ConversionReview"},
		{"no request", http.MethodPost, "application/json", strings.NewReader(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`), 400, "no request"},
		{"oversized", http.MethodPost, "application/json", io.LimitReader(strings.NewReader(strings.Repeat(" ", conversion.MaxRequestBytes+1)), conversion.MaxRequestBytes+1), 413, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/convert", tt.body)
			r.Header.Set("Content-Type", tt.contentType)
			code, out := send(t, wh, r)
			assert.Equal(t, tt.wantCode, code)
			assert.Equal(t, metav1.StatusFailure, out.Response.Result.Status)
			assert.Equal(t, int32(tt.wantCode), out.Response.Result.Code)
			assert.Contains(t, out.Response.Result.Message, tt.wantMessage)
		})
	}
}

// twoHubs is a second hub version of Widget, to test IsConvertible.
type twoHubs struct{ testwidget.V1 }

func (t *twoHubs) DeepCopyObject() runtime.Object { c := *t; return &c }

// plain is a Widget version that is neither hub nor convertible.
type plain struct{ testwidget.V2 }

func (p *plain) DeepCopyObject() runtime.Object { c := *p; return &c }
func (p *plain) ConvertTo()                     {} // not Convertible's signature

func TestIsConvertible(t *testing.T) {
	good := widgetScheme(t)
	ok, err := conversion.IsConvertible(good, &testwidget.V2{})
	require.NoError(t, err)
	assert.True(t, ok)

	core := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(core))
	ok, err = conversion.IsConvertible(core, &corev1.ConfigMap{})
	require.NoError(t, err)
	assert.False(t, ok, "a kind without hub or convertibles is simply not convertible")

	single := runtime.NewScheme()
	single.AddKnownTypeWithName(testwidget.V2Kind, &testwidget.V2{})
	ok, err = conversion.IsConvertible(single, &testwidget.V2{})
	require.NoError(t, err, "a single Convertible version (its hub another kind) is no error")
	assert.False(t, ok, "one version has nothing to convert")

	hubs := widgetScheme(t)
	hubs.AddKnownTypeWithName(testwidget.V1Kind.GroupVersion().WithKind("Widget").GroupKind().WithVersion("v4"), &twoHubs{})
	_, err = conversion.IsConvertible(hubs, &testwidget.V1{})
	assert.ErrorContains(t, err, "several hubs: versions [v1 v4]")

	half := runtime.NewScheme()
	half.AddKnownTypeWithName(testwidget.V1Kind, &testwidget.V1{})
	half.AddKnownTypeWithName(testwidget.V2Kind, &plain{})
	_, err = conversion.IsConvertible(half, &testwidget.V1{})
	assert.ErrorContains(t, err, "versions [v2] are neither Hub nor Convertible")

	_, err = conversion.IsConvertible(runtime.NewScheme(), &testwidget.V1{})
	assert.Error(t, err, "an unregistered type is an error")
}
