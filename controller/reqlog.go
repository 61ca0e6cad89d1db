package controller

import (
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
)

// requestSink is the sink of a reconcile's logger. It holds the request's
// namespace, name and reconcile ID and hands them to the controller's sink
// only when the reconcile logs, or derives a logger with more values or a
// name. Adding them up front (Logger.WithValues) costs every reconcile a
// new handler, which slog's JSON and text handlers pre-format, whether or
// not anything is logged; most reconciles log nothing.
//
// The values are controller-runtime's, in its order (see requestValues);
// the controller's own logger carries controller, controllerGroup and
// controllerKind before them (see controllerLogger).
type requestSink struct {
	parent          logr.LogSink
	kind            string // For's kind ("" when unknown): the key of the object reference
	cluster         string // Request.Cluster: a fleet cluster's name, "" for the manager's own
	namespace, name string
	id              *reconcileID

	once sync.Once
	sink logr.LogSink // parent with the values, one frame deeper
}

// controllerLogger returns the controller's logger: log with
// controller-runtime's keys of a controller, "controller" and, when the
// reconciled kind is known (the builder's For), "controllerGroup" and
// "controllerKind" (the group is "" for a core kind, as there).
func controllerLogger(log logr.Logger, name string, kind schema.GroupKind) logr.Logger {
	if kind.Kind == "" {
		return log.WithValues("controller", name)
	}
	return log.WithValues("controller", name, "controllerGroup", kind.Group, "controllerKind", kind.Kind)
}

// requestLogger returns log with the request's values attached lazily.
// newReconcileContext builds the same logger inside the reconcile's
// context.
func requestLogger(log logr.Logger, kind, namespace, name string, id *reconcileID) logr.Logger {
	parent := log.GetSink()
	if parent == nil { // logr.Discard()
		return log
	}
	return log.WithSink(&requestSink{parent: parent, kind: kind, namespace: namespace, name: name, id: id})
}

// values returns the request's keys and values, as controller-runtime's
// reconcile logger has them: the object as a klog.ObjectRef ({"name",
// "namespace"}, namespace left out when empty) under the reconciled kind's
// name ("Widget"), or under "object" when the kind is not known (a
// controller built by hand, as controller-runtime's controller.New does),
// then namespace, name and reconcileID. A Request of a fleet cluster
// (Request.Cluster) adds "cluster" before reconcileID (a kubeloop key:
// neither controller-runtime nor multicluster-runtime's builder logs the
// cluster); the manager's own cluster adds nothing.
func (s *requestSink) values() []any {
	key := "object"
	if s.kind != "" {
		key = s.kind
	}
	if s.cluster != "" {
		return []any{key, klog.KRef(s.namespace, s.name), "namespace", s.namespace, "name", s.name, "cluster", s.cluster, "reconcileID", s.id.value()}
	}
	return []any{key, klog.KRef(s.namespace, s.name), "namespace", s.namespace, "name", s.name, "reconcileID", s.id.value()}
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
