package log

import (
	"log/slog"
	"reflect"
	"sync/atomic"

	"github.com/go-logr/logr"
)

// slogDefaultSink is the sink of Default: it looks up slog.Default's
// handler at each line and logs through logr's slog sink for it, with the
// names and values given so far replayed in order. The resolved sink is
// kept until slog's default handler changes.
type slogDefaultSink struct {
	ops   []op // WithName and WithValues calls, in order
	depth int  // extra call depth asked for with WithCallDepth

	resolved atomic.Pointer[resolvedSink]
}

// op is one WithName (name set) or WithValues call.
type op struct {
	name   string
	values []any
}

type resolvedSink struct {
	handler slog.Handler
	sink    logr.LogSink
}

var (
	_ logr.LogSink          = (*slogDefaultSink)(nil)
	_ logr.CallDepthLogSink = (*slogDefaultSink)(nil)
)

// sink returns the logr sink for slog's current default handler.
func (s *slogDefaultSink) sink() logr.LogSink {
	h := slog.Default().Handler()
	if r := s.resolved.Load(); r != nil && sameHandler(r.handler, h) {
		return r.sink
	}
	l := logr.FromSlogHandler(h)
	for _, o := range s.ops {
		if o.values != nil {
			l = l.WithValues(o.values...)
		} else {
			l = l.WithName(o.name)
		}
	}
	sink := l.GetSink()
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(s.depth + 1) // the frame of this sink's Info or Error
	}
	s.resolved.Store(&resolvedSink{handler: h, sink: sink})
	return sink
}

// sameHandler reports whether a and b are the same handler. Only pointers
// are compared: == on an arbitrary handler value may panic.
func sameHandler(a, b slog.Handler) bool {
	ta := reflect.TypeOf(a)
	return ta != nil && ta == reflect.TypeOf(b) && ta.Kind() == reflect.Pointer && a == b
}

// with returns a copy of s with one more op.
func (s *slogDefaultSink) with(o op) *slogDefaultSink {
	ops := make([]op, len(s.ops), len(s.ops)+1)
	copy(ops, s.ops)
	return &slogDefaultSink{ops: append(ops, o), depth: s.depth}
}

// Init does nothing: the resolved sinks are initialised by logr.
func (s *slogDefaultSink) Init(logr.RuntimeInfo) {}

// Enabled asks the current default handler.
func (s *slogDefaultSink) Enabled(level int) bool {
	sink := s.sink()
	return sink != nil && sink.Enabled(level)
}

// Info logs through the current default handler.
func (s *slogDefaultSink) Info(level int, msg string, keysAndValues ...any) {
	if sink := s.sink(); sink != nil {
		sink.Info(level, msg, keysAndValues...)
	}
}

// Error logs through the current default handler.
func (s *slogDefaultSink) Error(err error, msg string, keysAndValues ...any) {
	if sink := s.sink(); sink != nil {
		sink.Error(err, msg, keysAndValues...)
	}
}

// WithValues returns a sink that adds keysAndValues to every line.
func (s *slogDefaultSink) WithValues(keysAndValues ...any) logr.LogSink {
	return s.with(op{values: append([]any{}, keysAndValues...)})
}

// WithName returns a sink whose lines carry name after the current names.
func (s *slogDefaultSink) WithName(name string) logr.LogSink {
	return s.with(op{name: name})
}

// WithCallDepth returns a sink that reports call sites depth frames
// further up.
func (s *slogDefaultSink) WithCallDepth(depth int) logr.LogSink {
	return &slogDefaultSink{ops: s.ops, depth: s.depth + depth} // with copies ops before appending
}
