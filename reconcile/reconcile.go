package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Request names the object to reconcile. Cluster-scoped objects have an
// empty Namespace.
type Request struct {
	types.NamespacedName
}

// String returns "namespace/name", or "name" for a cluster-scoped object.
func (r Request) String() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// Result says whether and when the controller looks at a Request again.
// The zero value means done: no requeue until the next event.
type Result struct {
	// RequeueAfter, when positive, re-queues the Request after this long
	// (when the returned error is nil). The per-item backoff is reset.
	RequeueAfter time.Duration
}

// IsZero reports whether the Result asks for nothing.
func (r Result) IsZero() bool { return r == Result{} }

// Reconciler brings one object's actual state towards its desired state.
type Reconciler interface {
	Reconcile(ctx context.Context, req Request) (Result, error)
}

// Func adapts a function to a Reconciler.
type Func func(context.Context, Request) (Result, error)

// Reconcile calls f(ctx, req).
func (f Func) Reconcile(ctx context.Context, req Request) (Result, error) { return f(ctx, req) }

var _ Reconciler = Func(nil)

// ObjectReconciler is a Reconciler that is handed the object itself, fetched
// from the cache, instead of its name. controller.AsReconciler adapts it to a
// Reconciler; a Request whose object no longer exists is dropped.
type ObjectReconciler[T any] interface {
	Reconcile(ctx context.Context, obj T) (Result, error)
}

// ObjectFunc adapts a function to an ObjectReconciler.
type ObjectFunc[T any] func(context.Context, T) (Result, error)

// Reconcile calls f(ctx, obj).
func (f ObjectFunc[T]) Reconcile(ctx context.Context, obj T) (Result, error) { return f(ctx, obj) }

// terminalError marks an error that retrying cannot fix.
type terminalError struct{ err error }

func (e *terminalError) Error() string {
	if e.err == nil {
		return "terminal error"
	}
	return "terminal error: " + e.err.Error()
}

func (e *terminalError) Unwrap() error { return e.err }

// Is makes errors.Is(err, TerminalError(nil)) true for every terminal error,
// as in controller-runtime.
func (e *terminalError) Is(target error) bool {
	_, ok := target.(*terminalError)
	return ok
}

// TerminalError wraps err so that the controller records it (log, metric
// controller_runtime_terminal_reconcile_errors_total) and does not retry the
// Request. The next event for the object reconciles it again.
func TerminalError(err error) error { return &terminalError{err: err} }

// IsTerminal reports whether err, or any error it wraps, is a TerminalError.
func IsTerminal(err error) bool {
	var t *terminalError
	return errors.As(err, &t)
}

// Errorf is fmt.Errorf followed by TerminalError.
func Errorf(format string, args ...any) error { return TerminalError(fmt.Errorf(format, args...)) }
