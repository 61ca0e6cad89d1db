package membership

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// When the ring's client can watch (client.WithWatch; the manager's
// sharding client can), the ring watches its Leases: the shard Leases
// (by RingLabel) feed the Observers as each renewal arrives, so that a
// shard's hold is judged from the moment its last renewal was stored
// (give or take the event's latency) rather than from the next read of
// the Leases, up to RetryPeriod later; and the sharder Lease's changes
// make the campaign read it at once, so that its observation of the last
// renewal is as fresh. Judged so, a killed shard's Lease expires for the
// others LeaseDuration after its last renewal, and Run sets a timer for
// that moment instead of finding it at its next tick
// (BENCHMARKS-sharding.md, "Recovery", has the breakdown that showed
// both delays: about 0.4 s each on average, 0.8 s each at worst with
// 4 s Leases). Without a watch the ring reads every RetryPeriod, as
// before. A watch event's arrival is a local clock reading taken after
// the Lease was stored, as the lease core's Observer requires.

// LeaseEvent is called with each Lease added, modified or deleted
// (deleted true), at its arrival.
type LeaseEvent func(l *coordinationv1.Lease, deleted bool, at time.Time)

// Watcher returns s's client as a client.WithWatch, if it is one.
func Watcher(s *spec.Spec) (client.WithWatch, bool) {
	w, ok := s.C.(client.WithWatch)
	return w, ok
}

// WatchLeases watches the Leases of the ring's namespace that opts select
// and calls fn with each one, until ctx ends. A watch that fails or ends
// is started again after RetryPeriod; the periodic reads cover the gap.
func WatchLeases(ctx context.Context, s *spec.Spec, w client.WithWatch, fn LeaseEvent, opts ...client.ListOption) {
	opts = append(opts, client.InNamespace(s.Namespace))
	for ctx.Err() == nil {
		wi, err := w.Watch(ctx, &coordinationv1.LeaseList{}, opts...)
		if err != nil {
			if ctx.Err() == nil {
				s.Log.V(1).Info("cannot watch the ring's leases; reading them every RetryPeriod", "err", err.Error())
			}
		} else {
			drainWatch(ctx, wi, fn)
		}
		spec.Sleep(ctx, s.RetryPeriod)
	}
}

func drainWatch(ctx context.Context, wi watch.Interface, fn LeaseEvent) {
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
