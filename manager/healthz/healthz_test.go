package healthz_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/manager/healthz"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}) }

func failing(msg string) healthz.Checker {
	return func(*http.Request) error { return errors.New(msg) }
}

func serve(h http.Handler, method, target string) *httptest.ResponseRecorder {
	mux := http.NewServeMux()
	mux.Handle("/healthz", http.StripPrefix("/healthz", h))
	mux.Handle("/healthz/", http.StripPrefix("/healthz", h))
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

func TestHandler(t *testing.T) {
	tests := []struct {
		name     string
		checks   map[string]healthz.Checker
		method   string
		target   string
		wantCode int
		wantBody string
	}{
		{
			name:     "no checks is healthy",
			target:   "/healthz",
			wantCode: http.StatusOK,
			wantBody: "ok",
		},
		{
			name:     "passing checks",
			checks:   map[string]healthz.Checker{"ping": healthz.Ping, "b": healthz.Ping},
			target:   "/healthz",
			wantCode: http.StatusOK,
			wantBody: "ok",
		},
		{
			name:     "verbose lists checks in name order",
			checks:   map[string]healthz.Checker{"ping": healthz.Ping, "b": healthz.Ping},
			target:   "/healthz?verbose",
			wantCode: http.StatusOK,
			wantBody: "[+]b ok\n[+]ping ok\ncheck passed\n",
		},
		{
			name:     "failing check lists every check with the reason",
			checks:   map[string]healthz.Checker{"ping": healthz.Ping, "cache": failing("list v1/Secret: forbidden\nsecond line")},
			target:   "/healthz",
			wantCode: http.StatusInternalServerError,
			wantBody: "[-]cache failed: list v1/Secret: forbidden; second line\n[+]ping ok\ncheck failed\n",
		},
		{
			name:     "excluded failing check",
			checks:   map[string]healthz.Checker{"ping": healthz.Ping, "cache": failing("down")},
			target:   "/healthz?exclude=cache&verbose",
			wantCode: http.StatusOK,
			wantBody: "[+]cache excluded: ok\n[+]ping ok\ncheck passed\n",
		},
		{
			name:     "sub-path runs one check",
			checks:   map[string]healthz.Checker{"ping": healthz.Ping, "cache": failing("down")},
			target:   "/healthz/ping",
			wantCode: http.StatusOK,
			wantBody: "ok",
		},
		{
			name:     "sub-path of a failing check",
			checks:   map[string]healthz.Checker{"ping": healthz.Ping, "cache": failing("down")},
			target:   "/healthz/cache",
			wantCode: http.StatusInternalServerError,
			wantBody: "[-]cache failed: down\ncheck failed\n",
		},
		{
			name:     "unknown sub-path",
			checks:   map[string]healthz.Checker{"ping": healthz.Ping},
			target:   "/healthz/nope",
			wantCode: http.StatusNotFound,
			wantBody: "no check named \"nope\"\n",
		},
		{
			name:     "trailing slash is the whole set",
			checks:   map[string]healthz.Checker{"cache": failing("down")},
			target:   "/healthz/",
			wantCode: http.StatusInternalServerError,
			wantBody: "[-]cache failed: down\ncheck failed\n",
		},
		{
			name:     "POST is refused",
			method:   http.MethodPost,
			target:   "/healthz",
			wantCode: http.StatusMethodNotAllowed,
			wantBody: "method not allowed\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &healthz.Handler{}
			for name, c := range tt.checks {
				require.NoError(t, h.AddCheck(name, c))
			}
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			rec := serve(h, method, tt.target)
			assert.Equal(t, tt.wantCode, rec.Code)
			assert.Equal(t, tt.wantBody, rec.Body.String())
		})
	}
}

func TestAddCheckRejects(t *testing.T) {
	h := &healthz.Handler{}
	require.NoError(t, h.AddCheck("ping", healthz.Ping))
	tests := []struct {
		name  string
		check string
		give  healthz.Checker
		want  string
	}{
		{"duplicate", "ping", healthz.Ping, `healthz: check "ping" already exists`},
		{"empty name", "", healthz.Ping, `healthz: invalid check name ""`},
		{"slash", "a/b", healthz.Ping, `healthz: invalid check name "a/b"`},
		{"nil checker", "x", nil, `healthz: check "x" is nil`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.EqualError(t, h.AddCheck(tt.check, tt.give), tt.want)
		})
	}
}

func TestCheckAddedWhileServing(t *testing.T) {
	h := &healthz.Handler{}
	assert.Equal(t, http.StatusOK, serve(h, http.MethodGet, "/healthz").Code)
	require.NoError(t, h.AddCheck("late", failing("not yet")))
	assert.Equal(t, http.StatusInternalServerError, serve(h, http.MethodGet, "/healthz").Code)
}
