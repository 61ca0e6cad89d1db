package reconcile

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Request names the object to reconcile. Cluster-scoped objects have an
// empty Namespace.
type Request struct {
	types.NamespacedName
	// Cluster names the cluster of a fleet (multicluster) that holds the
	// object; "" is the manager's own cluster, so single-cluster code never
	// sets it. Requests added by the sources of a fleet's cluster carry
	// that cluster's name.
	Cluster string
}

// String returns "namespace/name", or "name" for a cluster-scoped object;
// with a Cluster, "cluster/namespace/name" (the namespace may be empty:
// "cluster//name").
func (r Request) String() string {
	if r.Cluster != "" {
		return r.Cluster + "/" + r.Namespace + "/" + r.Name
	}
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// Hash returns a hash of r with seed, for workqueue.Options.Hash (the
// controller's queue uses it): equal Requests hash equal. It hashes each
// string once and mixes them in order, so the same names in other fields
// hash apart; it costs about a third of what hash/maphash's generic
// Comparable does on a Request.
func (r Request) Hash(seed maphash.Seed) uint64 {
	h := mix(maphash.String(seed, r.Name), maphash.String(seed, r.Namespace))
	if r.Cluster != "" {
		h = mix(h, maphash.String(seed, r.Cluster))
	}
	return h
}

// mix combines two 64-bit hashes; the multiply carries every input bit
// into the upper half, which is the half the workqueue's index uses.
func mix(a, b uint64) uint64 { return (a ^ bits.RotateLeft64(b, 29)) * 0x9e3779b97f4a7c15 }

type clusterKey struct{}

// WithCluster returns a context that names cluster: the context of a
// fleet cluster's sources carries it, so that a handler's map function can
// tell which cluster an event came from (ClusterFromContext).
func WithCluster(ctx context.Context, cluster string) context.Context {
	return context.WithValue(ctx, clusterKey{}, cluster)
}

// ClusterFromContext returns the cluster WithCluster put in ctx, or "" (the
// manager's own cluster).
func ClusterFromContext(ctx context.Context) string {
	s, _ := ctx.Value(clusterKey{}).(string)
	return s
}

// Result says whether and when the controller looks at a Request again.
// The zero value means done: no requeue until the next event.
//
// The controller acts on the first that applies, as controller-runtime's
// does: a non-nil error (the Result's requeue fields are then ignored, and
// a warning is logged if they were set); RequeueAfter; Requeue; done.
type Result struct {
	// Requeue, when RequeueAfter is 0 and the returned error is nil,
	// re-queues the Request through the controller's rate limiter
	// (AddRateLimited): each such requeue without an intervening success
	// backs off further, as a failure would, but is counted as
	// controller_runtime_reconcile_total{result="requeue"} and logs no
	// error. RequeueAfter wins when both are set.
	//
	// Deprecated: use RequeueAfter to look again after a known delay, or
	// return an error to retry with backoff. Kept because controller-runtime
	// keeps it, with the same meaning.
	Requeue bool

	// RequeueAfter, when positive, re-queues the Request after this long
	// (when the returned error is nil). The per-item backoff is reset.
	RequeueAfter time.Duration

	// Priority, when set, is the queue priority (workqueue.AddOpts.Priority:
	// higher first) with which the Request is re-added by this reconcile's
	// outcome: the retry after an error, RequeueAfter or Requeue. Nil means
	// the default priority, 0; unlike controller-runtime's priority queue,
	// kubeloop does not carry over the priority the Request was added with
	// (an initial-list Request, handler.LowPriority, is retried at 0). A
	// Result that re-adds nothing ignores it.
	Priority *int
}

// IsZero reports whether the Result asks for nothing: no requeue and no
// priority. A nil *Result is zero. As in controller-runtime, the receiver
// is a pointer, so that reconcile steps returning (*Result, error) may
// ask a nil one; call it on a variable, not on a composite literal.
func (r *Result) IsZero() bool {
	return r == nil || (!r.Requeue && r.RequeueAfter == 0 && r.Priority == nil)
}

// Reconciler brings one object's actual state towards its desired state.
// It is TypedReconciler of Request.
type Reconciler = TypedReconciler[Request]

// TypedReconciler is a Reconciler of a request type of its own, as in
// controller-runtime. kubeloop's controllers queue Request only, so the
// controller and the builder accept a TypedReconciler[Request] (that is, a
// Reconciler) and refuse any other request type with an error.
type TypedReconciler[request comparable] interface {
	// Reconcile brings the object named by req towards its desired state.
	Reconcile(ctx context.Context, req request) (Result, error)
}

// Func adapts a function to a Reconciler. It is TypedFunc of Request.
type Func = TypedFunc[Request]

// TypedFunc adapts a function to a TypedReconciler.
type TypedFunc[request comparable] func(context.Context, request) (Result, error)

// Reconcile calls f(ctx, req).
func (f TypedFunc[request]) Reconcile(ctx context.Context, req request) (Result, error) {
	return f(ctx, req)
}

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
