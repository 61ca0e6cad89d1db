// Package soak holds the opt-in soak of the reliability issue: an operator
// under load (Widgets with owned ConfigMaps and a finalizer, 4 workers,
// about 60 changes a second) while faults hit it in sequence through the
// fault proxy (connection cuts of 1, 5 and 20 s, accept-then-close), the
// API server restarts and etcd is paused. It checks convergence against
// the driver's record and prints a report: time to recover after each
// fault, the latency of a fresh change made once the operator's informer
// is back (reconciled ahead of the catch-up, which is queued at low
// priority), heap and goroutines at start and end.
//
// The test carries the build tag soak, so `make test` never builds it; run
// it with `make soak` (which sets KUBELOOP_SOAK=1). KUBELOOP_SOAK_OBJECTS,
// KUBELOOP_SOAK_RATE and KUBELOOP_SOAK_SETTLE_SECONDS change the load, and
// KUBELOOP_SOAK_REPORT names a file to write the report to.
package soak
