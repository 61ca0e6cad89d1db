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
// soon as Deadline passes, not at the next RetryPeriod, also when the API
// does not honour a renewal's context; every renewal's context ends by
// Deadline.
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
		err, returned := h.tryUntilDeadline(tctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if !returned {
			return fmt.Errorf("lease %s: %w (%s): the last renewal did not return: %w", h.Key(), ErrNotRenewed, h.cfg.RenewDeadline, err)
		}
		if err != nil {
			lastErr = err
		}
	}
}

// tryUntilDeadline makes one attempt with ctx and waits for it, but not
// past Deadline: an API that does not honour ctx (a request waiting on a
// lock before it is sent, say) must not keep Renew from returning when
// the hold ends. It reports whether the attempt returned; when it did not,
// the attempt goes on in the background (its context is done, so it sends
// nothing more once it gets going; should its write land anyway, it does
// not make the hold valid again) and err says why it was given up.
func (h *Holder) tryUntilDeadline(ctx context.Context) (err error, returned bool) {
	done := make(chan error, 1)
	go func() { done <- h.TryAcquireOrRenew(ctx) }()
	select {
	case err := <-done:
		return err, true
	case <-ctx.Done():
	}
	t := time.NewTimer(h.Deadline().Sub(h.cfg.Clock.Now()))
	defer t.Stop()
	select {
	case err := <-done:
		return err, true
	case <-t.C:
		h.mu.Lock()
		h.abandoned = h.cfg.Clock.Now()
		h.mu.Unlock()
		return ctx.Err(), false
	}
}
