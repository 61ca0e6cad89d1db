// Package metrics holds Registry, the process-wide Prometheus registry
// that every kubeloop manager also serves on /metrics. It is
// controller-runtime's pkg/metrics under the same names, so that ported
// code keeps registering its collectors the way it always has:
//
//	var reconciles = prometheus.NewCounter(prometheus.CounterOpts{
//		Name: "myoperator_reconciles_total",
//		Help: "Reconciles of my operator.",
//	})
//
//	func init() { metrics.Registry.MustRegister(reconciles) }
//
// ARCHITECTURE.md's first round said "no global metrics registry"; its
// third round (drop-in compatibility) overrides that for this one twin,
// and only for this one: the manager's own series (Go and process
// collectors, rest_client_*, workqueue_*, controller_runtime_*) stay on
// the manager's registry (manager.Manager's Metrics and MetricsRegistry),
// so two managers in one process still count separately. New code should
// prefer mgr.Metrics(): it needs no init() and no shared state.
//
// Guarantees:
//   - Registry starts empty; kubeloop itself registers nothing on it.
//   - Every manager's /metrics serves its own registry and Registry
//     together. A metric family whose name is on both (a go_* collector
//     registered here too, say) is served once, from the manager's
//     registry: the scrape does not fail on the duplicate.
//   - Registry may be replaced (in a test, or by a program that wants
//     its own registry); a manager reads the variable at each scrape.
//   - A collector on Registry that fails to collect does not blank the
//     scrape: the manager serves what it gathered and logs the error.
package metrics
