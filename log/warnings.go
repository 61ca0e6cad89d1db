package log

import (
	"context"
	"sync"
)

// KubeAPIWarningLoggerOptions configures NewKubeAPIWarningLogger.
type KubeAPIWarningLoggerOptions struct {
	// Deduplicate logs each distinct warning once; false logs every one.
	// The messages seen are kept for the life of the logger.
	Deduplicate bool
}

// KubeAPIWarningLogger is a client-go rest.WarningHandler (and
// WarningHandlerWithContext) that logs the API server's warnings,
// controller-runtime's log.KubeAPIWarningLogger: set it as a
// rest.Config's WarningHandler. Warnings go to the logger in the request's
// context (controller-runtime v0.21 and later), or to Default() without
// one, at info level.
type KubeAPIWarningLogger struct {
	opts KubeAPIWarningLoggerOptions

	mu      sync.Mutex
	written map[string]bool // with Deduplicate: the messages logged
}

// NewKubeAPIWarningLogger returns a warning logger configured by opts.
func NewKubeAPIWarningLogger(opts KubeAPIWarningLoggerOptions) *KubeAPIWarningLogger {
	return &KubeAPIWarningLogger{opts: opts, written: map[string]bool{}}
}

// HandleWarningHeader logs message when code is 299 (a warning) and
// message is not empty, to Default() (the form of controller-runtime
// before v0.21).
func (l *KubeAPIWarningLogger) HandleWarningHeader(code int, agent, message string) {
	l.HandleWarningHeaderWithContext(context.Background(), code, agent, message)
}

// HandleWarningHeaderWithContext is HandleWarningHeader that logs to the
// logger in ctx (see FromContext).
func (l *KubeAPIWarningLogger) HandleWarningHeaderWithContext(ctx context.Context, code int, _, message string) {
	if code != 299 || message == "" {
		return
	}
	if l.opts.Deduplicate {
		l.mu.Lock()
		seen := l.written[message]
		l.written[message] = true
		l.mu.Unlock()
		if seen {
			return
		}
	}
	FromContext(ctx).Info(message)
}
