package serving_test

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/webhook/admission"
	"github.com/kubeloop/kubeloop/webhook/conversion"
	"github.com/kubeloop/kubeloop/webhook/internal/serving"
)

// answer is the part of either webhook's review that the shared path
// fills when it refuses a request: an AdmissionResponse's status, a
// ConversionResponse's result.
type answer struct {
	metav1.TypeMeta `json:",inline"`
	Response        *struct {
		Status *metav1.Status `json:"status"`
		Result *metav1.Status `json:"result"`
	} `json:"response"`
}

// TestBothWebhooksRefuseAlike sends the same bad requests to the
// admission and the conversion webhook and asserts that both answer them
// through the one path: the same status, a review of their own kind, and
// the same message but for the protocol's name and kind.
func TestBothWebhooksRefuseAlike(t *testing.T) {
	webhooks := []struct {
		name, apiVersion, kind string
		handler                http.Handler
	}{
		{"admission", "admission.k8s.io/v1", "AdmissionReview", &admission.Webhook{Handler: admission.HandlerFunc(
			func(context.Context, admission.Request) admission.Response {
				t.Error("the admission handler saw a bad request")
				return admission.Allowed("")
			})}},
		{"conversion", "apiextensions.k8s.io/v1", "ConversionReview", conversion.NewWebhook(runtime.NewScheme())},
	}
	tests := []struct {
		name        string
		method      string
		contentType string
		body        string // {V} and {K} become the webhook's apiVersion and kind
		wantCode    int
		wantMessage string // after "<name>: "; {V} and {K} as in body
	}{
		{"not a POST", http.MethodGet, "application/json", "", 405, "method GET not allowed, want POST"},
		{"no content type", http.MethodPost, "", "{}", 400, `content type "" not allowed, want application/json`},
		{"YAML", http.MethodPost, "application/yaml", "{}", 400, `content type "application/yaml" not allowed, want application/json`},
		{"empty body", http.MethodPost, "application/json", "", 400, "empty request body"},
		{"malformed", http.MethodPost, "application/json; charset=utf-8", `{"request":`, 400, "decode {K}: unexpected end of JSON input"},
		{"another kind", http.MethodPost, "application/json", `{"apiVersion":"v1","kind":"ConfigMap"}`, 400, `want an {V} {K}, got apiVersion "v1" kind "ConfigMap"`},
		{"no request", http.MethodPost, "application/json", `{"apiVersion":"{V}","kind":"{K}"}`, 400, "{K} has no request"},
	}
	for _, wh := range webhooks {
		fill := strings.NewReplacer("{V}", wh.apiVersion, "{K}", wh.kind).Replace
		for _, tt := range tests {
			t.Run(wh.name+"/"+tt.name, func(t *testing.T) {
				var body io.Reader = http.NoBody
				if tt.body != "" {
					body = strings.NewReader(fill(tt.body))
				}
				r := httptest.NewRequest(tt.method, "/", body)
				if tt.contentType != "" {
					r.Header.Set("Content-Type", tt.contentType)
				}
				w := httptest.NewRecorder()
				wh.handler.ServeHTTP(w, r)

				assert.Equal(t, tt.wantCode, w.Code)
				assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
				var out answer
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out), "answer: %s", w.Body.String())
				assert.Equal(t, metav1.TypeMeta{APIVersion: wh.apiVersion, Kind: wh.kind}, out.TypeMeta)
				require.NotNil(t, out.Response)
				st := cmp.Or(out.Response.Status, out.Response.Result)
				require.NotNil(t, st)
				assert.Equal(t, metav1.StatusFailure, st.Status)
				assert.Equal(t, int32(tt.wantCode), st.Code)
				assert.Equal(t, wh.name+": "+fill(tt.wantMessage), st.Message)
			})
		}
	}
}

// TestBodyLimit: a body over the protocol's MaxBytes is a 413 and answer
// is not called.
func TestBodyLimit(t *testing.T) {
	p := toyProtocol(8)
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"apiVersion":"example.dev/v1","kind":"Toy","request":"x"}`))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	serving.Serve(context.Background(), w, r, p, func(context.Context, *toy) toy {
		t.Error("answer called for an oversized body")
		return toy{}
	})
	assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
	assert.JSONEq(t, `{"apiVersion":"example.dev/v1","kind":"Toy","response":"413 toy: request body larger than 8 bytes"}`, w.Body.String())
}

// TestServeWritesTheAnswer: a review that passes the checks reaches
// answer, whose review is written with status 200.
func TestServeWritesTheAnswer(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"apiVersion":"example.dev/v1","kind":"Toy","request":"ping"}`))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	serving.Serve(context.Background(), w, r, toyProtocol(1<<10), func(_ context.Context, in *toy) toy {
		return toy{TypeMeta: in.TypeMeta, Response: in.Request + " pong"}
	})
	assert.Equal(t, http.StatusOK, w.Code)
	assert.JSONEq(t, `{"apiVersion":"example.dev/v1","kind":"Toy","response":"ping pong"}`, w.Body.String())
}
