package handler_test

import (
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

// added is one request a handler added, with its priority.
type added struct {
	req      reconcile.Request
	priority int
}

// recordingQueue is a handler.Queue that records what is added, in order.
type recordingQueue struct{ adds []added }

var _ handler.Queue = (*recordingQueue)(nil)

func (q *recordingQueue) Add(req reconcile.Request) { q.adds = append(q.adds, added{req: req}) }

func (q *recordingQueue) AddWithOpts(opts workqueue.AddOpts, reqs ...reconcile.Request) {
	for _, r := range reqs {
		q.adds = append(q.adds, added{req: r, priority: opts.Priority})
	}
}

func workqueueOpts() workqueue.AddOpts { return workqueue.AddOpts{} }
