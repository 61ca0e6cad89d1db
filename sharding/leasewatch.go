package sharding

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeloop/kubeloop/client"
)

// When the ring's client can watch (client.WithWatch; the manager's
// sharding client can), the ring watches its Leases: the shard Leases
// (by RingLabel) feed members as each renewal arrives, so that a shard's
// hold is judged from the moment its last renewal was stored (give or
// take the event's latency) rather than from the next read of the
// Leases, up to RetryPeriod later; and the sharder Lease's changes make
// the campaign read it at once, so that its observation of the last
// renewal is as fresh. Judged so, a killed shard's Lease expires for the
// others LeaseDuration after its last renewal, and the membership reader
// sets a timer for that moment instead of finding it at its next tick
// (BENCHMARKS-sharding.md, "Recovery", has the breakdown that showed
// both delays: about 0.4 s each on average, 0.8 s each at worst with
// 4 s Leases). Without a watch the ring reads every RetryPeriod, as
// before. A watch event's arrival is a local clock reading taken after
// the Lease was stored, as the lease core's Observer requires.

// watchLeases watches the Leases of the ring's namespace that opts select
// and calls fn with each one added, modified or deleted (deleted true), at
// its arrival, until ctx ends. A watch that fails or ends is started again
// after RetryPeriod; the periodic reads cover the gap.
func (r *Ring) watchLeases(ctx context.Context, w client.WithWatch, fn func(l *coordinationv1.Lease, deleted bool, at time.Time), opts ...client.ListOption) {
	opts = append(opts, client.InNamespace(r.opts.Namespace))
	for ctx.Err() == nil {
		wi, err := w.Watch(ctx, &coordinationv1.LeaseList{}, opts...)
		if err != nil {
			if ctx.Err() == nil {
				r.log.V(1).Info("cannot watch the ring's leases; reading them every RetryPeriod", "err", err.Error())
			}
		} else {
			r.drainWatch(ctx, wi, fn)
		}
		sleep(ctx, r.opts.RetryPeriod)
	}
}

func (r *Ring) drainWatch(ctx context.Context, wi watch.Interface, fn func(l *coordinationv1.Lease, deleted bool, at time.Time)) {
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return
			}
			l, isLease := ev.Object.(*coordinationv1.Lease)
			if !isLease {
				continue // a bookmark or an error status: the watch ends next
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				fn(l, false, time.Now())
			case watch.Deleted:
				fn(l, true, time.Now())
			}
		}
	}
}

// watcher returns the ring's client as a client.WithWatch, if it is one.
func (r *Ring) watcher() (client.WithWatch, bool) {
	w, ok := r.c.(client.WithWatch)
	return w, ok
}

// signal sends on a channel of capacity 1 without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
