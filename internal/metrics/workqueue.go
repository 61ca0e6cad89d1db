package metrics

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeloop/kubeloop/workqueue"
)

// Workqueue is the workqueue.StatsProvider of the queues of one
// controller: it exposes the standard workqueue_* metrics, labelled
// {name, controller}. A queue keeps its own counts under its lock and the
// collector reads them when the registry is gathered, so the queue's hot
// path makes no Prometheus calls.
type Workqueue struct {
	controller string
	c          *workqueueCollector
}

var _ workqueue.StatsProvider = (*Workqueue)(nil)

// NewWorkqueue returns the provider for the queues of the controller named
// controller, registered on reg (nil: unregistered). The providers of
// several controllers on one registerer share one collector.
func NewWorkqueue(reg prometheus.Registerer, controller string) (*Workqueue, error) {
	c, err := register(reg, newWorkqueueCollector())
	return &Workqueue{controller: controller, c: c}, err
}

// HistogramBuckets returns the bounds of workqueue_queue_duration_seconds
// and workqueue_work_duration_seconds: 10ns to 1000s, by factors of 10.
func (w *Workqueue) HistogramBuckets() []float64 {
	return append([]float64(nil), w.c.buckets...)
}

// RegisterQueue adds a queue's Stats to the series {name, controller}; the
// returned function folds its final Stats into the series' totals.
func (w *Workqueue) RegisterQueue(name string, read func(*workqueue.Stats)) func() {
	return w.c.addQueue(name, w.controller, read)
}

// The methods below serve a queue that does not detect StatsProvider; they
// update the same series as RegisterQueue's queues, under the collector's
// lock.

// NewDepthMetric returns workqueue_depth{name, controller}.
func (w *Workqueue) NewDepthMetric(name string) workqueue.GaugeMetric {
	return simpleGauge{s: w.c.seriesOf(name, w.controller), mu: &w.c.mu, kind: gaugeDepth}
}

// NewAddsMetric returns workqueue_adds_total{name, controller}.
func (w *Workqueue) NewAddsMetric(name string) workqueue.CounterMetric {
	return simpleCounter{s: w.c.seriesOf(name, w.controller), mu: &w.c.mu, retries: false}
}

// NewLatencyMetric returns workqueue_queue_duration_seconds{name, controller}.
func (w *Workqueue) NewLatencyMetric(name string) workqueue.HistogramMetric {
	s := w.c.seriesOf(name, w.controller)
	return simpleHistogram{h: &s.total.Latency, mu: &w.c.mu, bounds: w.c.buckets}
}

// NewWorkDurationMetric returns workqueue_work_duration_seconds{name, controller}.
func (w *Workqueue) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	s := w.c.seriesOf(name, w.controller)
	return simpleHistogram{h: &s.total.WorkDuration, mu: &w.c.mu, bounds: w.c.buckets}
}

// NewUnfinishedWorkSecondsMetric returns
// workqueue_unfinished_work_seconds{name, controller}.
func (w *Workqueue) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return simpleGauge{s: w.c.seriesOf(name, w.controller), mu: &w.c.mu, kind: gaugeUnfinished}
}

// NewLongestRunningProcessorSecondsMetric returns
// workqueue_longest_running_processor_seconds{name, controller}.
func (w *Workqueue) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return simpleGauge{s: w.c.seriesOf(name, w.controller), mu: &w.c.mu, kind: gaugeLongest}
}

// NewRetriesMetric returns workqueue_retries_total{name, controller}.
func (w *Workqueue) NewRetriesMetric(name string) workqueue.CounterMetric {
	return simpleCounter{s: w.c.seriesOf(name, w.controller), mu: &w.c.mu, retries: true}
}

const (
	gaugeDepth = iota
	gaugeUnfinished
	gaugeLongest
)

// simpleGauge is one of a series' gauges for the simple methods.
type simpleGauge struct {
	s    *series
	mu   *sync.Mutex
	kind int
}

func (g simpleGauge) Inc() { g.add(1) }
func (g simpleGauge) Dec() { g.add(-1) }

func (g simpleGauge) add(d int) {
	g.mu.Lock()
	g.s.total.Depth += d
	g.mu.Unlock()
}

func (g simpleGauge) Set(v float64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch g.kind {
	case gaugeDepth:
		g.s.total.Depth = int(v)
	case gaugeUnfinished:
		g.s.total.UnfinishedWorkSeconds = v
	default:
		g.s.total.LongestRunningProcessorSeconds = v
	}
}

// simpleCounter is a series' adds or retries counter for the simple
// methods.
type simpleCounter struct {
	s       *series
	mu      *sync.Mutex
	retries bool
}

func (c simpleCounter) Inc() {
	c.mu.Lock()
	if c.retries {
		c.s.total.Retries++
	} else {
		c.s.total.Adds++
	}
	c.mu.Unlock()
}

// simpleHistogram is a series' latency or work duration histogram for the
// simple methods.
type simpleHistogram struct {
	h      *workqueue.Histogram
	mu     *sync.Mutex
	bounds []float64
}

func (h simpleHistogram) Observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v) // first bound >= v
	h.mu.Lock()
	h.h.Counts[i]++
	h.h.Sum += v
	h.mu.Unlock()
}
