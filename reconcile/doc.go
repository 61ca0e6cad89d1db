// Package reconcile defines what a controller calls: a Reconciler that is
// handed a Request naming one object and returns a Result saying whether and
// when to look at that object again.
//
// Guarantees the controller gives every Reconciler:
//   - A Request names an object, not an event: many events for one object
//     collapse into one Request while it waits in the queue.
//   - The same Request is never reconciled by two workers at once.
//   - A returned error re-queues the Request with per-item exponential
//     backoff, unless the error wraps TerminalError, which is recorded and
//     never retried.
//   - Result{RequeueAfter: d} with a nil error re-queues the Request after d
//     and resets its backoff.
//
// Reconcile must be idempotent: it reads the current state, computes the
// difference to the desired state and writes only that difference.
package reconcile
