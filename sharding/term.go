package sharding

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/kubeloop/kubeloop/internal/lease"
)

// term is one hold of the shard Lease, from its acquisition until it is
// lost or released. Each term has its own lease.Holder: the fence of a
// reconcile admitted in one term (its Holder) never admits a write again
// once that term ended, whatever later terms do.
type term struct {
	n      int
	holder *lease.Holder
	ctx    context.Context // ends when the term ends: lost, released or about to lapse
	end    context.CancelFunc
	// rejoined: this shard's name held the Lease before this term (a
	// rejoin after a loss, or a new process taking over the Lease of an
	// earlier one with the same shard name), so the sharder may have moved
	// objects of this shard while it was out. The term then admits only
	// moveWindow after the acquisition and confirms assignments.
	rejoined bool
	// confirmed are the keys whose assignment a live read confirmed in
	// this term (only when rejoined); guarded by Ring.mu.
	confirmed map[string]struct{}
}

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
// be called once.
func (r *Ring) Start(ctx context.Context) error {
	if !r.started.CompareAndSwap(false, true) {
		return fmt.Errorf("sharding: ring %q: Start called more than once", r.opts.Ring)
	}
	defer r.endTerm()
	if r.ss != nil {
		if err := r.ss.detect(ctx); err != nil {
			return err
		}
	}
	log := r.log
	holder := r.first
	var lostAt time.Time
	for n := 1; ; n++ {
		if n > 1 {
			var err error
			if holder, err = r.newShardHolder(); err != nil { // the options were validated by New
				return fmt.Errorf("sharding: ring %q: %w", r.opts.Ring, err)
			}
			// Replicas that lost their Leases together (an overloaded or
			// unreachable API server) do not come back in lockstep.
			wait := time.Duration(rand.Float64() * lease.JitterFactor * float64(r.opts.RetryPeriod))
			if !sleep(ctx, wait) {
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
		t := r.beginTerm(n, holder, n > 1 || (read && prev.Holder != r.holder))
		r.metrics.leaseHeld.WithLabelValues(r.opts.Ring, r.opts.Shard).Set(1)
		quarantine := time.Duration(0)
		if t.rejoined {
			quarantine = r.moveWindow()
			log.Info("holding the shard lease again; admitting reconciles once moves decided while out have landed",
				"term", n, "in", quarantine.String())
		}

		bg, stopBG := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { r.watchMembers(bg) })
		if r.ss != nil {
			wg.Go(func() { r.ss.run(bg) }) // no sharder in ServerSide mode
		} else {
			wg.Go(func() { r.campaign(bg) })
		}
		wg.Go(func() {
			if !sleep(bg, quarantine) || !r.openGate(t) {
				return
			}
			if n == 1 {
				log.Info("holding the shard lease; reconciling this shard's objects")
				return
			}
			r.metrics.rejoins.WithLabelValues(r.opts.Ring, r.opts.Shard).Inc()
			r.metrics.rejoin.WithLabelValues(r.opts.Ring).Observe(time.Since(lostAt).Seconds())
			log.Info("rejoined the ring; reconciling this shard's objects", "term", n,
				"out", time.Since(lostAt).Round(time.Millisecond).String())
		})
		renewErr := holder.Renew(ctx)
		if renewErr != nil {
			r.close(false) // fence at once, before the reader and campaign stop
			lostAt = time.Now()
			r.metrics.losses.WithLabelValues(r.opts.Ring, r.opts.Shard).Inc()
			next := "keeping the caches; rejoining"
			if r.opts.ExitOnLeaseLoss {
				next = "exiting (ExitOnLeaseLoss)"
			}
			log.Error(renewErr, "shard lease lost; stopped reconciling sharded objects; "+next, "term", n)
		}
		stopBG()
		wg.Wait()
		r.metrics.leaseHeld.WithLabelValues(r.opts.Ring, r.opts.Shard).Set(0)

		if renewErr == nil {
			r.stopTerm(ctx, t)
			return nil
		}
		if r.opts.ExitOnLeaseLoss {
			return fmt.Errorf("sharding: ring %q shard %q: %w: %w", r.opts.Ring, r.opts.Shard, ErrLeaseLost, renewErr)
		}
	}
}

// stopTerm is the graceful end of term t: it stops admitting, waits for the
// reconciles in flight while the hold is valid, and releases the Lease if
// none is left.
func (r *Ring) stopTerm(ctx context.Context, t *term) {
	if !r.close(true) {
		r.log.Info("reconciles still running when the lease would lapse; leaving it to expire")
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.RenewDeadline)
	defer cancel()
	if _, err := t.holder.Release(rctx); err != nil {
		r.log.Error(err, "could not release the shard lease; it expires after LeaseDuration")
		return
	}
	r.log.Info("released the shard lease; leaving the ring")
}

// beginTerm makes a term of holder, which has just acquired the Lease,
// the current one; it admits nothing yet (see openGate).
func (r *Ring) beginTerm(n int, holder *lease.Holder, rejoined bool) *term {
	t := &term{n: n, holder: holder, rejoined: rejoined}
	t.ctx, t.end = context.WithCancel(context.Background())
	if rejoined {
		t.confirmed = map[string]struct{}{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		r.cur.end()
	}
	r.cur = t
	return t
}

// openGate opens the gate for t, if t is still the current term and valid;
// it reports whether it did.
func (r *Ring) openGate(t *term) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != t || t.ctx.Err() != nil || !t.holder.Valid(time.Now()) {
		return false
	}
	r.accepting = true
	if !r.admittedYet {
		r.admittedYet = true
		close(r.admitting)
	}
	return true
}

// endTerm ends the current term, if any: its reconciles' contexts end.
func (r *Ring) endTerm() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.accepting = false
	if r.cur != nil {
		r.cur.end()
	}
}

// close stops admitting reconciles and, with wait, waits until none is in
// flight or the current term's hold stops being valid; it reports whether
// none is in flight. It then ends the term: in-flight reconciles see their
// context end (their writes are refused by the term's fence already, once
// the hold is no longer valid).
func (r *Ring) close(wait bool) bool {
	r.mu.Lock()
	r.accepting = false
	t := r.cur
	if wait && t != nil {
		stop := context.AfterFunc(t.ctx, func() {
			r.mu.Lock()
			r.idle.Broadcast()
			r.mu.Unlock()
		})
		timer := time.AfterFunc(time.Until(t.holder.Deadline()), t.end)
		for r.inflight > 0 && t.ctx.Err() == nil {
			r.idle.Wait()
		}
		timer.Stop()
		stop()
	}
	idle := r.inflight == 0
	r.mu.Unlock()
	if t != nil {
		t.end()
	}
	return idle
}
