// Package metrics holds the Prometheus collectors of controllers and their
// work queues, under controller-runtime's and client-go's metric names so
// that existing dashboards and alerts keep working.
//
// Guarantees:
//   - Nothing is registered globally: every collector is registered on the
//     prometheus.Registerer it is given (normally the manager's registry).
//   - Each collector is registered once per registerer. A second controller
//     on the same registerer reuses the vector or collector already
//     registered (prometheus.AlreadyRegisteredError), so several
//     controllers share one and differ only by their controller label.
//   - Work queues are read when the registry is gathered (Workqueue is a
//     workqueue.StatsProvider): their hot path makes no Prometheus calls,
//     and what they expose is what vectors updated on every change would.
//   - A nil registerer gives working but unexported collectors, so callers
//     need no nil checks.
//   - Histograms have classic buckets only, unless the registerer was
//     marked by WithNativeHistograms: then the histograms built through
//     HistogramOpts (here, in the webhook server and in the manager) are
//     native histograms too, with controller-runtime's settings. The
//     workqueue_* histograms stay classic: the queue counts into fixed
//     buckets itself.
package metrics
