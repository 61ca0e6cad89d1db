package sharder

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/lease"
	"github.com/kubeloop/kubeloop/sharding/internal/membership"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// Sharder is the ring's sharder: the replica that holds the ring's sharder
// Lease keeps the webhook configuration and sweeps.
type Sharder struct {
	spec    *spec.Spec
	members *membership.Membership
	kick    <-chan struct{}                 // asks for a sweep now
	ensure  func(context.Context) error     // keeps the webhook configuration
	swept   atomic.Pointer[map[string]bool] // the live shards of the last complete sweep
}

// New returns the sharder of s. It reads the ring's Leases with m's
// observations, sweeps at once on kick, and calls ensure (nil: nothing)
// before each sweep.
func New(s *spec.Spec, m *membership.Membership, kick <-chan struct{}, ensure func(context.Context) error) *Sharder {
	if ensure == nil {
		ensure = func(context.Context) error { return nil }
	}
	return &Sharder{spec: s, members: m, kick: kick, ensure: ensure}
}

// Campaign runs for the ring's sharder Lease until ctx ends and, while it
// holds it, runs the sharder. A lost sharder Lease stops the sharder and
// the campaign starts over; the shard itself is unaffected.
func (sh *Sharder) Campaign(ctx context.Context) {
	r := sh.spec
	changed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if w, ok := membership.Watcher(r); ok {
		wg.Go(func() {
			membership.WatchLeases(wctx, r, w, func(*coordinationv1.Lease, bool, time.Time) { spec.Signal(changed) },
				client.MatchingFields{"metadata.name": spec.SharderLeaseName(r.Ring)})
		})
	}
	for ctx.Err() == nil {
		el, err := membership.NewHolder(r, nil, spec.SharderLeaseName(r.Ring), nil)
		if err != nil { // the options were validated by New
			r.Log.Error(err, "cannot campaign for the sharder")
			return
		}
		if sh.acquire(ctx, el, changed) != nil {
			return
		}
		r.Log.Info("running the sharder", "lease", el.Key())
		r.Metrics.Leading.WithLabelValues(r.Ring).Set(1)
		lead, stop := context.WithCancel(ctx)
		// The sharder's patches are fenced by its Lease: a sharder that
		// lost it writes nothing more.
		lead = client.WithFence(lead, el)
		done := make(chan struct{})
		go func() {
			defer close(done)
			sh.run(lead)
		}()
		err = el.Renew(ctx)
		stop()
		<-done
		r.Metrics.Leading.WithLabelValues(r.Ring).Set(0)
		if err != nil {
			r.Log.Error(err, "sharder lease lost; campaigning again")
			continue
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.RenewDeadline)
		if _, err := el.Release(rctx); err != nil {
			r.Log.Error(err, "could not release the sharder lease")
		}
		cancel()
	}
}

// acquire tries to acquire the sharder Lease with el until it
// succeeds (nil) or ctx ends (ctx.Err()). It tries at once, whenever the
// Lease changed (changed, from the watch: el then observes a renewal
// within an event's latency of its storage), when the hold el last
// observed ends by that observation, and otherwise every RetryPeriod plus
// up to JitterFactor of it, as the lease core's Acquire does. el judges
// expiry from its own read, which returned before this loop noted the
// record, so at the noted time plus the record's duration the hold has
// ended for el too. (A killed sharder's Lease is so taken over about
// LeaseDuration after its last renewal; with Acquire's fixed period it
// was up to 2*1.2*RetryPeriod later.)
func (sh *Sharder) acquire(ctx context.Context, el *lease.Holder, changed <-chan struct{}) error {
	r := sh.spec
	var (
		seen   lease.Record
		seenAt time.Time
	)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		tctx, cancel := context.WithTimeout(ctx, el.TryTimeout())
		err := el.TryAcquireOrRenew(tctx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		now := time.Now()
		wait := r.RetryPeriod + time.Duration(rand.Float64()*lease.JitterFactor*float64(r.RetryPeriod))
		if rec, ok := el.Observed(); ok {
			if seenAt.IsZero() || !rec.Equal(seen) {
				seen, seenAt = rec, now
			}
			// Only an expiry still to come shortens the wait: a hold that
			// ended already and still failed (a conflict with another
			// candidate, an unreachable API server) waits the period.
			if until := seenAt.Add(rec.Duration).Sub(now); rec.Holder != "" && until > 0 {
				wait = min(wait, until+time.Millisecond)
			}
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-changed:
			t.Stop()
		}
	}
}

// run keeps the webhook configuration up to date and sweeps: at
// once, when the membership changes, every SweepInterval, and every
// DrainCheckInterval while drains are pending.
func (sh *Sharder) run(ctx context.Context) {
	r := sh.spec
	next := time.Duration(0)
	for {
		timer := time.NewTimer(next)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-sh.kick:
			timer.Stop()
		case <-timer.C:
		}
		if err := sh.ensure(ctx); err != nil && ctx.Err() == nil {
			r.Log.Error(err, "cannot update the webhook configuration; the sweep assigns objects meanwhile")
		}
		res, err := sh.Sweep(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			r.Log.Error(err, "sweep failed")
			next = r.DrainCheckInterval
		case res.Pending > 0 || res.Conflicts > 0:
			next = r.DrainCheckInterval
		default:
			next = r.SweepInterval
		}
	}
}
