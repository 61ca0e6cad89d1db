package controller

import (
	"sync"

	"github.com/go-logr/logr"
)

// requestSink is the sink of a reconcile's logger. It holds the request's
// namespace, name and reconcile ID and hands them to the controller's sink
// only when the reconcile logs, or derives a logger with more values or a
// name. Adding them up front (Logger.WithValues) costs every reconcile a
// new handler, which slog's JSON and text handlers pre-format, whether or
// not anything is logged; most reconciles log nothing.
type requestSink struct {
	parent          logr.LogSink
	namespace, name string
	id              *reconcileID

	once sync.Once
	sink logr.LogSink // parent with the values, one frame deeper
}

// requestLogger returns log with the request's values attached lazily.
// newReconcileContext builds the same logger inside the reconcile's
// context.
func requestLogger(log logr.Logger, namespace, name string, id *reconcileID) logr.Logger {
	parent := log.GetSink()
	if parent == nil { // logr.Discard()
		return log
	}
	return log.WithSink(&requestSink{parent: parent, namespace: namespace, name: name, id: id})
}

func (s *requestSink) values() []any {
	return []any{"namespace", s.namespace, "name", s.name, "reconcileID", s.id.value()}
}

// withValues returns the parent with the request's values, for logging
// through this sink: one call frame deeper than a direct caller.
func (s *requestSink) withValues() logr.LogSink {
	s.once.Do(func() {
		s.sink = s.parent.WithValues(s.values()...)
		if cd, ok := s.sink.(logr.CallDepthLogSink); ok {
			s.sink = cd.WithCallDepth(1)
		}
	})
	return s.sink
}

// Init is a no-op: the parent sink was initialised with its logger.
func (s *requestSink) Init(logr.RuntimeInfo) {}

// Enabled asks the parent.
func (s *requestSink) Enabled(level int) bool { return s.parent.Enabled(level) }

// Info logs through the parent with the request's values.
func (s *requestSink) Info(level int, msg string, keysAndValues ...any) {
	s.GetCallStackHelper()()
	s.withValues().Info(level, msg, keysAndValues...)
}

// Error logs through the parent with the request's values.
func (s *requestSink) Error(err error, msg string, keysAndValues ...any) {
	s.GetCallStackHelper()()
	s.withValues().Error(err, msg, keysAndValues...)
}

// GetCallStackHelper returns the parent's helper marker (testr's
// t.Helper), so that call sites are reported past this sink too.
func (s *requestSink) GetCallStackHelper() func() {
	if h, ok := s.parent.(logr.CallStackHelperLogSink); ok {
		return h.GetCallStackHelper()
	}
	return func() {}
}

// WithValues returns the parent with the request's values and these.
func (s *requestSink) WithValues(keysAndValues ...any) logr.LogSink {
	return s.parent.WithValues(append(s.values(), keysAndValues...)...)
}

// WithName returns the parent, named, with the request's values.
func (s *requestSink) WithName(name string) logr.LogSink {
	return s.parent.WithName(name).WithValues(s.values()...)
}
