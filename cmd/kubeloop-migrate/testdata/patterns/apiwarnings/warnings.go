// Package apiwarnings sends the API server's warnings to the log and to
// a test's own check, as ClickHouse/clickhouse-operator's webhook suite
// does: a rest.WarningHandler around log.KubeAPIWarningLogger.
package apiwarnings

import (
	"context"
	"sync"

	"github.com/go-logr/logr"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// Handler logs each warning once to log and remembers them all.
type Handler struct {
	l   *logf.KubeAPIWarningLogger
	log logr.Logger

	mu   sync.Mutex
	seen []string
}

// NewHandler returns a Handler logging to log; set it as a rest.Config's
// WarningHandler.
func NewHandler(log logr.Logger) *Handler {
	return &Handler{l: logf.NewKubeAPIWarningLogger(logf.KubeAPIWarningLoggerOptions{Deduplicate: true}), log: log}
}

// HandleWarningHeader is client-go's rest.WarningHandler.
func (h *Handler) HandleWarningHeader(code int, agent string, text string) {
	if code != 299 || len(text) == 0 {
		return
	}
	h.mu.Lock()
	h.seen = append(h.seen, text)
	h.mu.Unlock()
	h.l.HandleWarningHeaderWithContext(logr.NewContext(context.Background(), h.log), code, agent, text)
}

// Seen returns the warnings handled.
func (h *Handler) Seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}
