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
//   - Result{Requeue: true} (deprecated, as in controller-runtime) with a
//     nil error and no RequeueAfter re-queues the Request through the rate
//     limiter: it backs off as a failure would, without logging an error.
//   - Result.Priority, when set, is the priority of the re-add the Result
//     or the error causes.
//   - Reconciler and Func are TypedReconciler and TypedFunc of Request, the
//     names ported controller-runtime code uses; controllers accept no
//     other request type.
//   - Request.Cluster is "" for the manager's own cluster; a controller
//     that watches a fleet's clusters (package multicluster) gets Requests
//     naming the cluster of the object, and reads and writes it through
//     that cluster's client.
//
// Reconcile must be idempotent: it reads the current state, computes the
// difference to the desired state and writes only that difference.
package reconcile
