package healthz_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/kubeloop/kubeloop/manager/healthz"
)

// A Handler mounted under /readyz reports each check.
func ExampleHandler() {
	h := &healthz.Handler{}
	_ = h.AddCheck("ping", healthz.Ping)
	_ = h.AddCheck("db", func(*http.Request) error { return errors.New("connection refused") })

	rec := httptest.NewRecorder()
	http.StripPrefix("/readyz", h).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	fmt.Println(rec.Code)
	fmt.Print(rec.Body.String())
	// Output:
	// 500
	// [-]db failed: connection refused
	// [+]ping ok
	// check failed
}
