package serving_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/webhook/internal/serving"
)

// toy is a review in the shape of the real ones: an envelope, a request
// and a response.
type toy struct {
	metav1.TypeMeta `json:",inline"`
	Request         string `json:"request,omitempty"`
	Response        string `json:"response,omitempty"`
}

// toyProtocol is example.dev/v1 Toy with a body limit.
func toyProtocol(maxBytes int64) *serving.Protocol[toy] {
	return &serving.Protocol[toy]{
		Name: "toy", APIVersion: "example.dev/v1", Kind: "Toy", MaxBytes: maxBytes,
		Envelope: func(r *toy) (metav1.TypeMeta, bool) { return r.TypeMeta, r.Request != "" },
		Failure: func(tm metav1.TypeMeta, st metav1.Status) toy {
			return toy{TypeMeta: tm, Response: fmt.Sprintf("%d %s", st.Code, st.Message)}
		},
	}
}

// A protocol names its review's envelope and how to refuse; Serve does the
// rest, for the admission and the conversion webhook alike.
func ExampleServe() {
	p := toyProtocol(1 << 10)
	echo := func(_ context.Context, in *toy) toy {
		return toy{TypeMeta: in.TypeMeta, Response: "got " + in.Request}
	}
	for _, body := range []string{
		`{"apiVersion":"example.dev/v1","kind":"Toy","request":"hello"}`,
		`{"apiVersion":"example.dev/v1","kind":"Toy"}`,
		`{"apiVersion":"example.dev/v2","kind":"Toy","request":"hello"}`,
	} {
		r := httptest.NewRequest(http.MethodPost, "/toy", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		serving.Serve(context.Background(), w, r, p, echo)
		fmt.Println(w.Code, w.Body.String())
	}
	// Output:
	// 200 {"kind":"Toy","apiVersion":"example.dev/v1","response":"got hello"}
	// 400 {"kind":"Toy","apiVersion":"example.dev/v1","response":"400 toy: Toy has no request"}
	// 400 {"kind":"Toy","apiVersion":"example.dev/v1","response":"400 toy: want an example.dev/v1 Toy, got apiVersion \"example.dev/v2\" kind \"Toy\""}
}
