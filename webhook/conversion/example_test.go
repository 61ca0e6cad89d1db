package conversion_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/webhook/conversion"
	"github.com/kubeloop/kubeloop/webhook/internal/testwidget"
)

// The API server asks for a v1 Widget (the hub) in v2, which calls the
// size "width".
func ExampleNewWebhook() {
	scheme := runtime.NewScheme()
	_ = testwidget.AddToScheme(scheme)
	wh := conversion.NewWebhook(scheme)

	review := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{
		"uid":"1","desiredAPIVersion":"test.kubeloop.dev/v2",
		"objects":[{"apiVersion":"test.kubeloop.dev/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":3}}]}}`
	r := httptest.NewRequest("POST", "/convert", strings.NewReader(review))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	wh.ServeHTTP(w, r)

	var out conversion.Review
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	fmt.Println(out.Response.Result.Status, string(out.Response.ConvertedObjects[0].Raw))
	// Output:
	// Success {"kind":"Widget","apiVersion":"test.kubeloop.dev/v2","metadata":{"name":"w"},"spec":{"width":3}}
}
