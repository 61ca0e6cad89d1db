package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeloop/kubeloop/workqueue"
)

// Workqueue is a workqueue.MetricsProvider that records the standard
// workqueue_* metrics, labelled {name, controller}.
type Workqueue struct {
	controller string

	depth      *prometheus.GaugeVec
	adds       *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	work       *prometheus.HistogramVec
	unfinished *prometheus.GaugeVec
	longest    *prometheus.GaugeVec
	retries    *prometheus.CounterVec
}

var _ workqueue.MetricsProvider = (*Workqueue)(nil)

// NewWorkqueue returns the provider for the queues of the controller named
// controller, registered on reg (nil: unregistered).
func NewWorkqueue(reg prometheus.Registerer, controller string) (*Workqueue, error) {
	labels := []string{"name", "controller"}
	var errs []error
	gauge := func(name, help string) *prometheus.GaugeVec {
		v, err := register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: name, Help: help}, labels))
		errs = append(errs, err)
		return v
	}
	counter := func(name, help string) *prometheus.CounterVec {
		v, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: name, Help: help}, labels))
		errs = append(errs, err)
		return v
	}
	histogram := func(name, help string) *prometheus.HistogramVec {
		v, err := register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "workqueue", Name: name, Help: help,
			Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12),
		}, labels))
		errs = append(errs, err)
		return v
	}
	w := &Workqueue{
		controller: controller,
		depth:      gauge("depth", "Current depth of workqueue"),
		adds:       counter("adds_total", "Total number of adds handled by workqueue"),
		latency:    histogram("queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested"),
		work:       histogram("work_duration_seconds", "How long in seconds processing an item from workqueue takes."),
		unfinished: gauge("unfinished_work_seconds", "How many seconds of work has been done that is in progress and hasn't "+
			"been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck "+
			"threads by observing the rate at which this increases."),
		longest: gauge("longest_running_processor_seconds", "How many seconds has the longest running processor for workqueue been running."),
		retries: counter("retries_total", "Total number of retries handled by workqueue"),
	}
	return w, errors.Join(errs...)
}

// NewDepthMetric returns workqueue_depth{name, controller}.
func (w *Workqueue) NewDepthMetric(name string) workqueue.GaugeMetric {
	return w.depth.WithLabelValues(name, w.controller)
}

// NewAddsMetric returns workqueue_adds_total{name, controller}.
func (w *Workqueue) NewAddsMetric(name string) workqueue.CounterMetric {
	return w.adds.WithLabelValues(name, w.controller)
}

// NewLatencyMetric returns workqueue_queue_duration_seconds{name, controller}.
func (w *Workqueue) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return w.latency.WithLabelValues(name, w.controller)
}

// NewWorkDurationMetric returns workqueue_work_duration_seconds{name, controller}.
func (w *Workqueue) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return w.work.WithLabelValues(name, w.controller)
}

// NewUnfinishedWorkSecondsMetric returns
// workqueue_unfinished_work_seconds{name, controller}.
func (w *Workqueue) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return w.unfinished.WithLabelValues(name, w.controller)
}

// NewLongestRunningProcessorSecondsMetric returns
// workqueue_longest_running_processor_seconds{name, controller}.
func (w *Workqueue) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return w.longest.WithLabelValues(name, w.controller)
}

// NewRetriesMetric returns workqueue_retries_total{name, controller}.
func (w *Workqueue) NewRetriesMetric(name string) workqueue.CounterMetric {
	return w.retries.WithLabelValues(name, w.controller)
}
