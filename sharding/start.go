package sharding

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/lease"
	"github.com/kubeloop/kubeloop/sharding/internal/gate"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// Start runs the ring until ctx ends: it acquires the shard Lease, renews
// it, reads the ring's Leases every RetryPeriod, campaigns for the
// sharder, and admits reconciles from the acquisition on. When a renewal
// has failed for RenewDeadline the shard has lost its Lease: it stops
// admitting, fences the reconciles in flight (their contexts end and their
// writes fail with ErrLeaseLost), stops its membership reader and
// campaign, keeps the caches running, and rejoins: it acquires the Lease
// again, after a random delay of up to 1.2*RetryPeriod and then every
// RetryPeriod (jittered), starts the reader and the campaign again, and
// admits reconciles moveWindow (RenewDeadline) after the re-acquisition.
// The first acquisition waits so too when it takes over a Lease that an
// earlier process with the same shard name wrote (expired or released).
// With ExitOnLeaseLoss it returns an error wrapping ErrLeaseLost instead.
//
// When ctx ends it stops admitting reconciles, waits for those in flight,
// and releases the Lease so the sharder reassigns this shard's objects at
// once (if a reconcile is still running when the Lease would stop being
// valid, the Lease is left to expire instead), and returns nil. Start may
// be called once. Start is Run without a cache: the gate reads the
// requests' objects through the ring's live client.
func (r *Ring) Start(ctx context.Context) error { return r.Run(ctx, nil) }

// Run is Start with the reader the gate reads the requests' objects with:
// the cache whose sharded kinds ConfigureCache narrowed, the one that
// feeds the gated reconcilers (the manager passes its client). nil reads
// through the ring's live client. Start or Run may be called once.
func (r *Ring) Run(ctx context.Context, reader client.Reader) error {
	if !r.started.CompareAndSwap(false, true) {
		return fmt.Errorf("sharding: ring %q: Start called more than once", r.spec.Ring)
	}
	defer r.gate.End()
	if r.ss != nil {
		if err := r.ss.detect(ctx); err != nil {
			return err
		}
	}
	log := r.spec.Log
	s := r.spec
	holder := r.first
	var lostAt time.Time
	for n := 1; ; n++ {
		if n > 1 {
			var err error
			if holder, err = r.members.NewShardHolder(); err != nil { // the options were validated by New
				return fmt.Errorf("sharding: ring %q: %w", s.Ring, err)
			}
			// Replicas that lost their Leases together (an overloaded or
			// unreachable API server) do not come back in lockstep.
			wait := time.Duration(rand.Float64() * lease.JitterFactor * float64(s.RetryPeriod))
			if !spec.Sleep(ctx, wait) {
				return nil
			}
			log.Info("rejoining the ring", "lease", holder.Key(), "term", n, "after", wait.Round(time.Millisecond).String())
		} else {
			log.Info("joining the ring", "lease", holder.Key())
		}
		err := holder.Acquire(ctx, func(err error) { log.Info("waiting for the shard lease", "reason", err.Error(), "term", n) })
		if err != nil {
			return nil // ctx ended before the Lease was ours
		}
		// A Lease found written by another identity (an earlier process
		// with this shard name, expired or released) is a rejoin too.
		prev, read := holder.Observed()
		t := r.gate.Begin(n, holder, n > 1 || (read && prev.Holder != s.Holder), reader)
		s.Metrics.LeaseHeld.WithLabelValues(s.Ring, s.Shard).Set(1)
		quarantine := time.Duration(0)
		if t.Rejoined {
			quarantine = s.MoveWindow()
			log.Info("holding the shard lease again; admitting reconciles once moves decided while out have landed",
				"term", n, "in", quarantine.String())
		}

		bg, stopBG := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { r.members.Run(bg) })
		if r.ss != nil {
			wg.Go(func() { r.ss.run(bg, reader) }) // no sharder in ServerSide mode
		} else {
			wg.Go(func() { r.sharder.Campaign(bg) })
		}
		wg.Go(func() {
			if !spec.Sleep(bg, quarantine) || !r.gate.Open(t) {
				return
			}
			if n == 1 {
				log.Info("holding the shard lease; reconciling this shard's objects")
				return
			}
			s.Metrics.Rejoins.WithLabelValues(s.Ring, s.Shard).Inc()
			s.Metrics.Rejoin.WithLabelValues(s.Ring).Observe(time.Since(lostAt).Seconds())
			log.Info("rejoined the ring; reconciling this shard's objects", "term", n,
				"out", time.Since(lostAt).Round(time.Millisecond).String())
		})
		renewErr := holder.Renew(ctx)
		if renewErr != nil {
			r.gate.Close(false) // fence at once, before the reader and campaign stop
			lostAt = time.Now()
			s.Metrics.Losses.WithLabelValues(s.Ring, s.Shard).Inc()
			next := "keeping the caches; rejoining"
			if r.opts.ExitOnLeaseLoss {
				next = "exiting (ExitOnLeaseLoss)"
			}
			log.Error(renewErr, "shard lease lost; stopped reconciling sharded objects; "+next, "term", n)
		}
		stopBG()
		wg.Wait()
		s.Metrics.LeaseHeld.WithLabelValues(s.Ring, s.Shard).Set(0)

		if renewErr == nil {
			r.stopTerm(ctx, t)
			return nil
		}
		if r.opts.ExitOnLeaseLoss {
			return fmt.Errorf("sharding: ring %q shard %q: %w: %w", s.Ring, s.Shard, ErrLeaseLost, renewErr)
		}
	}
}

// stopTerm is the graceful end of term t: it stops admitting, waits for the
// reconciles in flight while the hold is valid, and releases the Lease if
// none is left.
func (r *Ring) stopTerm(ctx context.Context, t *gate.Term) {
	if !r.gate.Close(true) {
		r.spec.Log.Info("reconciles still running when the lease would lapse; leaving it to expire")
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.spec.RenewDeadline)
	defer cancel()
	if _, err := t.Holder.Release(rctx); err != nil {
		r.spec.Log.Error(err, "could not release the shard lease; it expires after LeaseDuration")
		return
	}
	r.spec.Log.Info("released the shard lease; leaving the ring")
}
