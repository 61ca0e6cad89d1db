// Package logfilter keeps object contents out of the library's logs. It is
// internal: manager, cache and controller apply it to the loggers they are
// given.
//
// client-go's REST client dumps every request and response body at V(8)
// ("Request Body", "Response Body") through the logger of the request's
// context, which in kubeloop is the manager's, cache's or reconcile's
// logger. Those bodies hold Secrets' data. Without this filter a process
// run at maximum verbosity writes every Secret it reads to its log.
package logfilter

import "github.com/go-logr/logr"

// dropped are the messages of client-go's body dumps.
var dropped = map[string]bool{"Request Body": true, "Response Body": true}

// WithoutBodies returns l with client-go's body dumps dropped. A logger
// without a sink (logr.Discard) and one already filtered are returned as
// they are.
func WithoutBodies(l logr.Logger) logr.Logger {
	s := l.GetSink()
	if s == nil {
		return l
	}
	switch s.(type) {
	case *sink, *depthSink:
		return l
	}
	if _, ok := s.(logr.CallDepthLogSink); ok {
		return logr.New(&depthSink{sink{s}})
	}
	return logr.New(&sink{s})
}

type sink struct{ logr.LogSink }

func (s *sink) Info(level int, msg string, kv ...any) {
	if dropped[msg] {
		return
	}
	s.LogSink.Info(level, msg, kv...)
}

func (s *sink) WithValues(kv ...any) logr.LogSink { return wrap(s.LogSink.WithValues(kv...)) }
func (s *sink) WithName(name string) logr.LogSink { return wrap(s.LogSink.WithName(name)) }

// depthSink keeps the wrapped sink's call-depth support, so file and line
// in log lines stay the caller's.
type depthSink struct{ sink }

func (s *depthSink) WithCallDepth(depth int) logr.LogSink {
	return wrap(s.LogSink.(logr.CallDepthLogSink).WithCallDepth(depth))
}

func (s *depthSink) Info(level int, msg string, kv ...any) { s.sink.Info(level, msg, kv...) }
func (s *depthSink) WithValues(kv ...any) logr.LogSink     { return s.sink.WithValues(kv...) }
func (s *depthSink) WithName(name string) logr.LogSink     { return s.sink.WithName(name) }

func wrap(s logr.LogSink) logr.LogSink {
	if _, ok := s.(logr.CallDepthLogSink); ok {
		return &depthSink{sink{s}}
	}
	return &sink{s}
}
