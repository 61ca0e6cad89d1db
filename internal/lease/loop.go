package lease

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// TryTimeout bounds one attempt of Acquire and Renew: max(1s,
// RenewDeadline/2), so that one hung request cannot by itself use up
// RenewDeadline.
func (h *Holder) TryTimeout() time.Duration { return max(time.Second, h.cfg.RenewDeadline/2) }

// Acquire calls TryAcquireOrRenew until it succeeds (it returns nil) or
// ctx ends (it returns ctx.Err()). The first attempt is immediate, the
// next ones RetryPeriod plus up to JitterFactor*RetryPeriod apart, as in
// client-go. onRetry, when not nil, gets each failed attempt's error while
// ctx is live.
func (h *Holder) Acquire(ctx context.Context, onRetry func(error)) error {
	for {
		tctx, cancel := context.WithTimeout(ctx, h.TryTimeout())
		err := h.TryAcquireOrRenew(tctx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if onRetry != nil {
			onRetry(err)
		}
		wait := h.cfg.RetryPeriod + time.Duration(rand.Float64()*JitterFactor*float64(h.cfg.RetryPeriod))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Renew renews the held Lease every RetryPeriod until ctx ends (it
// returns nil) or the hold stops being valid (it returns an error wrapping
// ErrNotRenewed, naming the Lease and the last failure). It returns as
// soon as Deadline passes, not at the next RetryPeriod, and no renewal
// request outlives Deadline.
func (h *Holder) Renew(ctx context.Context) error {
	var lastErr error
	lost := func() error {
		if lastErr == nil {
			return fmt.Errorf("lease %s: %w (%s)", h.Key(), ErrNotRenewed, h.cfg.RenewDeadline)
		}
		return fmt.Errorf("lease %s: %w (%s): %w", h.Key(), ErrNotRenewed, h.cfg.RenewDeadline, lastErr)
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		left := h.Deadline().Sub(h.cfg.Clock.Now())
		if !h.Valid(h.cfg.Clock.Now()) {
			return lost()
		}
		t.Reset(min(h.cfg.RetryPeriod, left))
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		now := h.cfg.Clock.Now()
		if !h.Valid(now) {
			return lost()
		}
		tctx, cancel := context.WithTimeout(ctx, min(h.Deadline().Sub(now), h.TryTimeout()))
		err := h.TryAcquireOrRenew(tctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			lastErr = err
		}
	}
}
