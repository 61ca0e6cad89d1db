package controller

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeloop/kubeloop/internal/probe"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/trace"
	"github.com/kubeloop/kubeloop/workqueue"
)

// errReconcileTimeout is the cause of a reconcile context that hit
// Options.ReconcileTimeout.
var errReconcileTimeout = errors.New("controller: ReconcileTimeout exceeded")

// work is one worker: it reconciles Requests until the queue shuts down
// or ctx ends. It is processNextWorkItem in a loop, except that it hands
// each Request back as it takes the next (Queue.DoneAndGet: the queue's
// lock taken once per Request, not twice). A panic out of a reconcile
// (Options.RecoverPanic false) still marks the Request done.
func (c *Controller) work(ctx context.Context) {
	req, shutdown := c.queue.Get()
	held := !shutdown
	defer func() {
		if held {
			c.queue.Done(req)
		}
	}()
	for held {
		if !c.handle(ctx, req) {
			return
		}
		req, shutdown = c.queue.DoneAndGet(req)
		probe.Mark(probe.Taken)
		held = !shutdown
	}
}

// processNextWorkItem takes one Request from the queue and reconciles it.
// It returns false when the worker should exit: the queue shut down or ctx
// ended. It is the synchronous core of the controller (work, the
// workers' loop, is the same with the Done of one Request and the Get of
// the next in one call).
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	req, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(req)
	return c.handle(ctx, req)
}

// handle reconciles req, taken from the queue, unless the worker should
// stop (ctx ended: it returns false) or req is to be dropped. The caller
// marks req done.
func (c *Controller) handle(ctx context.Context, req reconcile.Request) bool {
	links := c.takeLinks(req) // the events that led to req, when traced (trace.go)
	if ctx.Err() != nil {
		return false // stopping: start no new reconcile
	}
	if c.dropsRequests() { // the reconciled kind is not served (watches.go)
		c.queue.Forget(req)
		return true
	}
	if c.clusterGone(req) { // its fleet cluster left (clusters.go)
		c.queue.Forget(req)
		return true
	}
	c.metrics.ActiveWorkers.Inc()
	defer c.metrics.ActiveWorkers.Dec()
	c.reconcileHandler(ctx, req, links)
	return true
}

// reconcileHandler reconciles req and acts on the outcome. links are the
// events that led to req when the controller is traced (trace.go).
func (c *Controller) reconcileHandler(ctx context.Context, req reconcile.Request, links *eventLinks) {
	probe.Mark(probe.Context)
	rctx, log := newReconcileContextWith(ctx, c.log, c.kind, req, c.logCtor)
	var span trace.Span
	if c.tracer != nil {
		rctx, span = c.startReconcileSpan(rctx, req, links)
	}

	start := time.Now()
	res, err := c.reconcile(rctx, req)
	c.metrics.ReconcileTime.Observe(time.Since(start).Seconds())
	if span != nil {
		endReconcileSpan(span, res, err)
	}

	var prio int
	if res.Priority != nil {
		prio = *res.Priority
	}
	switch {
	case err != nil:
		c.metrics.Errors.Inc()
		c.metrics.ReconcileError.Inc()
		if reconcile.IsTerminal(err) {
			c.queue.Forget(req)
			c.metrics.TerminalErrors.Inc()
			log.Error(err, "Reconciler error; terminal, not retried")
			return
		}
		if c.clusterGone(req) {
			// The cluster left during the reconcile: nothing to retry.
			c.queue.Forget(req)
			log.V(1).Info("Reconcile failed after its cluster left; dropped", "error", err.Error())
			return
		}
		if c.dropsRequests() {
			// The kind went away during the reconcile: nothing to retry.
			c.queue.Forget(req)
			log.V(1).Info("Reconcile failed while the reconciled kind is not served; dropped", "error", err.Error())
			return
		}
		if res.Requeue || res.RequeueAfter > 0 { //nolint:staticcheck // Requeue is handled until it is removed
			log.Info("Warning: Reconciler returned both a result with Requeue or RequeueAfter set and an error; the requeue fields are ignored", "result", res)
		}
		c.addRateLimited(req, prio)
		if ctx.Err() != nil {
			log.V(1).Info("Reconcile ended by shutdown", "error", err.Error())
			return
		}
		if apierrors.IsConflict(err) {
			// A 409 means the read was stale: the retry reads the newer
			// object. Routine under concurrent writers, so not an error.
			log.V(1).Info("Reconcile met a conflict; retrying", "error", err.Error())
			return
		}
		log.Error(err, "Reconciler error")
	case res.RequeueAfter > 0:
		c.queue.Forget(req)
		if prio == 0 {
			c.queue.AddAfter(req, res.RequeueAfter)
		} else {
			c.queue.AddWithOpts(workqueue.AddOpts{Priority: prio, After: res.RequeueAfter}, req)
		}
		c.metrics.ReconcileRequeueAfter.Inc()
	case res.Requeue: //nolint:staticcheck // Requeue is handled until it is removed
		// controller-runtime's meaning: a rate-limited requeue, which backs
		// off like a failure; the backoff is not reset.
		c.addRateLimited(req, prio)
		c.metrics.ReconcileRequeue.Inc()
	default:
		c.queue.Forget(req)
		c.metrics.ReconcileSuccess.Inc()
	}
}

// addRateLimited re-adds req after the rate limiter's delay, at priority
// prio.
func (c *Controller) addRateLimited(req reconcile.Request, prio int) {
	if prio == 0 {
		c.queue.AddRateLimited(req)
		return
	}
	c.queue.AddWithOpts(workqueue.AddOpts{Priority: prio, RateLimited: true}, req)
}

// reconcile calls the Reconciler with the reconcile timeout and, unless
// disabled, turns a panic into an error.
func (c *Controller) reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
	if c.reconcileTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, c.reconcileTimeout, errReconcileTimeout)
		defer func() {
			if errors.Is(context.Cause(ctx), errReconcileTimeout) {
				c.metrics.Timeouts.Inc()
			}
			cancel()
		}()
	}
	if c.recoverPanic {
		defer func() {
			if r := recover(); r != nil {
				c.metrics.Panics.Inc()
				err = fmt.Errorf("panic: %v [recovered]", r)
				logr.FromContextOrDiscard(ctx).Error(err, "Observed a panic in Reconcile", "stacktrace", string(debug.Stack()))
			}
		}()
	}
	return c.do.Reconcile(ctx, req)
}

type reconcileIDKey struct{}
