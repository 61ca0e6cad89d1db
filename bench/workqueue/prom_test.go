package workqueue_bench

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeloop/kubeloop/internal/metrics"
	"github.com/kubeloop/kubeloop/workqueue"
)

// newProductionProvider returns the workqueue metrics provider a kubeloop
// controller named controller gets from its manager: internal/metrics'
// provider registered on the manager's (here a fresh) registry.
func newProductionProvider(controller string) workqueue.StatsProvider {
	p, err := metrics.NewWorkqueue(prometheus.NewRegistry(), controller)
	if err != nil {
		panic(err)
	}
	return p
}

// promProvider is a client-go style workqueue.MetricsProvider for
// kubeloop's queue (served through workqueue.NewMetricsAdapter), with
// controller-runtime's metric names, labels and histogram settings
// (native histograms included): what a user who writes their own provider
// would get (BenchmarkKubeloopMetricsCost, provider=simple).
type promProvider struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, work              *prometheus.HistogramVec
}

var _ workqueue.MetricsProvider = (*promProvider)(nil)

func newPromProvider(reg prometheus.Registerer) *promProvider {
	hist := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem:                       "workqueue",
			Name:                            name,
			Help:                            help,
			Buckets:                         prometheus.ExponentialBuckets(10e-9, 10, 12),
			NativeHistogramBucketFactor:     1.1,
			NativeHistogramMaxBucketNumber:  100,
			NativeHistogramMinResetDuration: time.Hour,
		}, []string{"name", "controller"})
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: name, Help: help}, labels)
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: name, Help: help},
			[]string{"name", "controller"})
	}
	p := &promProvider{
		depth:      gauge("depth", "Current depth of workqueue", "name", "controller", "priority"),
		unfinished: gauge("unfinished_work_seconds", "Seconds of work in progress", "name", "controller"),
		longest:    gauge("longest_running_processor_seconds", "Seconds the longest item has run", "name", "controller"),
		adds:       counter("adds_total", "Total number of adds handled by workqueue"),
		retries:    counter("retries_total", "Total number of delayed adds"),
		latency:    hist("queue_duration_seconds", "Seconds an item stays in the queue before Get"),
		work:       hist("work_duration_seconds", "Seconds between Get and Done"),
	}
	reg.MustRegister(p.depth, p.unfinished, p.longest, p.adds, p.retries, p.latency, p.work)
	return p
}

func (p *promProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return p.depth.WithLabelValues(name, name, "")
}
func (p *promProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.adds.WithLabelValues(name, name)
}
func (p *promProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.latency.WithLabelValues(name, name)
}
func (p *promProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.work.WithLabelValues(name, name)
}
func (p *promProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.unfinished.WithLabelValues(name, name)
}
func (p *promProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.longest.WithLabelValues(name, name)
}
func (p *promProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.retries.WithLabelValues(name, name)
}
