package healthz

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Checker reports whether one aspect of the process is healthy: nil means
// healthy, an error says what is wrong.
type Checker func(req *http.Request) error

// Ping is a Checker that is always healthy: the process answers HTTP.
func Ping(*http.Request) error { return nil }

// Handler serves a set of named checks. The zero value is ready to use.
type Handler struct {
	mu     sync.RWMutex
	checks map[string]Checker
}

var _ http.Handler = (*Handler)(nil)

// AddCheck adds check under name. It fails when name is empty, contains a
// slash, is already used, or check is nil.
func (h *Handler) AddCheck(name string, check Checker) error {
	switch {
	case name == "" || strings.Contains(name, "/"):
		return fmt.Errorf("healthz: invalid check name %q", name)
	case check == nil:
		return fmt.Errorf("healthz: check %q is nil", name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.checks[name]; ok {
		return fmt.Errorf("healthz: check %q already exists", name)
	}
	if h.checks == nil {
		h.checks = make(map[string]Checker)
	}
	h.checks[name] = check
	return nil
}

// ServeHTTP runs the checks. Mount the handler with http.StripPrefix: an
// empty remaining path runs every check, a remaining "name" runs that check
// alone. See the package documentation for the query parameters and the
// response format.
func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	names, checks := h.snapshot()

	// What remains of the path once the mount prefix is stripped names one
	// check; nothing left means every check.
	if name := strings.Trim(req.URL.Path, "/"); name != "" {
		if _, ok := checks[name]; !ok {
			http.Error(w, fmt.Sprintf("no check named %q", name), http.StatusNotFound)
			return
		}
		names = []string{name}
	}

	query := req.URL.Query()
	excluded := query["exclude"]
	_, verbose := query["verbose"]

	var out bytes.Buffer
	failed := false
	for _, name := range names {
		if slices.Contains(excluded, name) {
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", name)
			continue
		}
		err := checks[name](req)
		var note Note
		switch {
		case errors.As(err, &note): // note.go
			fmt.Fprintf(&out, "[+]%s ok: %s\n", name, oneLine(err))
		case err != nil:
			failed = true
			fmt.Fprintf(&out, "[-]%s failed: %s\n", name, oneLine(err))
		default:
			fmt.Fprintf(&out, "[+]%s ok\n", name)
		}
	}

	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if failed {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(&out, "check failed\n")
		_, _ = w.Write(out.Bytes())
		return
	}
	w.WriteHeader(http.StatusOK)
	if !verbose {
		_, _ = w.Write([]byte("ok"))
		return
	}
	fmt.Fprintf(&out, "check passed\n")
	_, _ = w.Write(out.Bytes())
}

// snapshot returns the check names in order and a copy of the checks.
func (h *Handler) snapshot() ([]string, map[string]Checker) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	checks := make(map[string]Checker, len(h.checks))
	names := make([]string, 0, len(h.checks))
	for name, c := range h.checks {
		checks[name] = c
		names = append(names, name)
	}
	slices.Sort(names)
	return names, checks
}

// oneLine keeps a multi-line (joined) error on one output line.
func oneLine(err error) string {
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return errors.New("unknown error").Error()
	}
	return strings.Join(lines, "; ")
}
