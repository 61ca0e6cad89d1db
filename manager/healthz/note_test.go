package healthz_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/manager/healthz"
)

// A check that returns a Note, even wrapped, passes and prints its remark.
func TestNotePasses(t *testing.T) {
	h := &healthz.Handler{}
	require.NoError(t, h.AddCheck("crd-sources", func(*http.Request) error {
		return fmt.Errorf("wrapped: %w", healthz.Note("waiting for kinds to be served: Widget.example.com (controller widget)"))
	}))
	require.NoError(t, h.AddCheck("ping", healthz.Ping))
	rec := httptest.NewRecorder()
	http.StripPrefix("/readyz", h).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz?verbose", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "[+]crd-sources ok: wrapped: waiting for kinds to be served: Widget.example.com (controller widget)\n[+]ping ok\ncheck passed\n", rec.Body.String())
}
