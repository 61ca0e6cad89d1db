package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Values of the result label of controller_runtime_reconcile_total.
const (
	ResultSuccess      = "success"
	ResultError        = "error"
	ResultRequeueAfter = "requeue_after"
	ResultRequeue      = "requeue"
)

// Controller is the set of reconcile metrics of one controller, already
// curried with its controller label, so the hot path does no label lookups.
type Controller struct {
	// ReconcileSuccess, ReconcileError, ReconcileRequeueAfter and
	// ReconcileRequeue count controller_runtime_reconcile_total by result.
	ReconcileSuccess      prometheus.Counter
	ReconcileError        prometheus.Counter
	ReconcileRequeueAfter prometheus.Counter
	ReconcileRequeue      prometheus.Counter
	// Errors counts controller_runtime_reconcile_errors_total.
	Errors prometheus.Counter
	// TerminalErrors counts controller_runtime_terminal_reconcile_errors_total.
	TerminalErrors prometheus.Counter
	// Panics counts controller_runtime_reconcile_panics_total.
	Panics prometheus.Counter
	// Timeouts counts controller_runtime_reconcile_timeouts_total.
	Timeouts prometheus.Counter
	// ReconcileTime observes controller_runtime_reconcile_time_seconds.
	ReconcileTime prometheus.Observer
	// MaxConcurrentReconciles is controller_runtime_max_concurrent_reconciles.
	MaxConcurrentReconciles prometheus.Gauge
	// ActiveWorkers is controller_runtime_active_workers.
	ActiveWorkers prometheus.Gauge
}

// NewController returns the metrics of the controller named controller,
// registered on reg (nil: unregistered). Every result label value starts
// at zero, so a rate() over it exists from the first scrape.
func NewController(reg prometheus.Registerer, controller string) (*Controller, error) {
	var errs []error
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		v, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels))
		errs = append(errs, err)
		return v
	}
	gaugeVec := func(name, help string) *prometheus.GaugeVec {
		v, err := register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"controller"}))
		errs = append(errs, err)
		return v
	}

	total := counterVec("controller_runtime_reconcile_total",
		"Total number of reconciliations per controller", "controller", "result")
	errorsVec := counterVec("controller_runtime_reconcile_errors_total",
		"Total number of reconciliation errors per controller", "controller")
	terminal := counterVec("controller_runtime_terminal_reconcile_errors_total",
		"Total number of terminal reconciliation errors per controller", "controller")
	panics := counterVec("controller_runtime_reconcile_panics_total",
		"Total number of reconciliation panics per controller", "controller")
	timeouts := counterVec("controller_runtime_reconcile_timeouts_total",
		"Total number of reconciliation timeouts per controller", "controller")
	timeVec, err := register(reg, prometheus.NewHistogramVec(HistogramOpts(reg, prometheus.HistogramOpts{
		Name: "controller_runtime_reconcile_time_seconds",
		Help: "Length of time per reconciliation per controller",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
			1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60},
	}), []string{"controller"}))
	errs = append(errs, err)
	maxConc := gaugeVec("controller_runtime_max_concurrent_reconciles",
		"Maximum number of concurrent reconciles per controller")
	active := gaugeVec("controller_runtime_active_workers",
		"Number of currently used workers per controller")

	m := &Controller{
		ReconcileSuccess:        total.WithLabelValues(controller, ResultSuccess),
		ReconcileError:          total.WithLabelValues(controller, ResultError),
		ReconcileRequeueAfter:   total.WithLabelValues(controller, ResultRequeueAfter),
		ReconcileRequeue:        total.WithLabelValues(controller, ResultRequeue),
		Errors:                  errorsVec.WithLabelValues(controller),
		TerminalErrors:          terminal.WithLabelValues(controller),
		Panics:                  panics.WithLabelValues(controller),
		Timeouts:                timeouts.WithLabelValues(controller),
		ReconcileTime:           timeVec.WithLabelValues(controller),
		MaxConcurrentReconciles: maxConc.WithLabelValues(controller),
		ActiveWorkers:           active.WithLabelValues(controller),
	}
	return m, errors.Join(errs...)
}
