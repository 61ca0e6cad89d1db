package metrics

import (
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
