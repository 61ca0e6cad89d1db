package controller

import (
	"slices"
	"sync"
	"time"

	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

// watchQueue is a watch's door to the controller's queue: closed by
// RemoveWatch, it adds nothing. Adds take its read lock, so close waits for
// the adds in flight.
type watchQueue struct {
	// Queue is the controller's queue; its methods other than the adds
	// (Get, Done, Len, ...) pass through.
	handler.Queue
	q handler.TypedPriorityQueue[reconcile.Request]
	// cluster, when not "", is stamped on every Request added without a
	// cluster: the watch is of that fleet cluster.
	cluster string

	mu     sync.RWMutex
	closed bool
}

// stamp returns reqs with w's cluster set where they have none, copying
// the slice only when something changes.
func (w *watchQueue) stamp(reqs []reconcile.Request) []reconcile.Request {
	var out []reconcile.Request
	for i, r := range reqs {
		if r.Cluster == "" {
			if out == nil {
				out = slices.Clone(reqs)
			}
			out[i].Cluster = w.cluster
		}
	}
	if out == nil {
		return reqs
	}
	return out
}

var _ handler.TypedPriorityQueue[reconcile.Request] = (*watchQueue)(nil)

// AddAfter adds req after d unless the watch was removed.
func (w *watchQueue) AddAfter(req reconcile.Request, d time.Duration) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if !w.closed {
		if w.cluster != "" && req.Cluster == "" {
			req.Cluster = w.cluster
		}
		w.q.AddAfter(req, d)
	}
}

// AddRateLimited adds req through the rate limiter unless the watch was
// removed.
func (w *watchQueue) AddRateLimited(req reconcile.Request) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if !w.closed {
		if w.cluster != "" && req.Cluster == "" {
			req.Cluster = w.cluster
		}
		w.q.AddRateLimited(req)
	}
}

// Add adds req unless the watch was removed.
func (w *watchQueue) Add(req reconcile.Request) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if !w.closed {
		if w.cluster != "" && req.Cluster == "" {
			req.Cluster = w.cluster
		}
		w.q.Add(req)
	}
}

// AddWithOpts adds reqs unless the watch was removed.
func (w *watchQueue) AddWithOpts(opts workqueue.AddOpts, reqs ...reconcile.Request) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if !w.closed {
		if w.cluster != "" {
			reqs = w.stamp(reqs)
		}
		w.q.AddWithOpts(opts, reqs...)
	}
}

// Expect passes an announcement of n keys on to the queue
// (workqueue.Queue.Expect) unless the watch was removed.
func (w *watchQueue) Expect(n int) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if e, ok := w.q.(workqueue.Expecter); ok && !w.closed {
		e.Expect(n)
	}
}

var _ workqueue.Expecter = (*watchQueue)(nil)

func (w *watchQueue) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}
