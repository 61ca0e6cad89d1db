// Package fence is the client's write fence: the chain of holds a context
// carries (With) and the check every write makes just before its request
// is sent (Write).
//
// Guarantees:
//   - Without a fence in the context a write costs one ctx.Value lookup
//     and runs with the caller's context.
//   - Fences nest: every fence of the chain must admit a write; the
//     shortest remaining time bounds it.
//   - A refused write fails with an error wrapping lease.ErrLost, before
//     its request is sent; an admitted one runs with its context bounded
//     by the time the hold remains, and an error of a request that bound
//     cancelled wraps lease.ErrLost too.
package fence

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kubeloop/kubeloop/internal/lease"
)

// Fence says how long the hold a write depends on stays valid, or why no
// write may be sent now (client.Fence).
type Fence interface {
	Remaining() (time.Duration, error)
}

type key struct{}

// chain is the fences of a context, innermost first.
type chain struct {
	f      Fence
	parent *chain
}

var _ Fence = (*chain)(nil)

// Remaining asks every fence of the chain: the first refusal wins,
// otherwise the shortest remaining time.
func (c *chain) Remaining() (time.Duration, error) {
	left := time.Duration(math.MaxInt64)
	for ; c != nil; c = c.parent {
		d, err := c.f.Remaining()
		if err != nil {
			return 0, err
		}
		if d <= 0 {
			return 0, fmt.Errorf("%w: no time left (%T)", lease.ErrLost, c.f)
		}
		left = min(left, d)
	}
	return left, nil
}

// With returns a context whose writes are fenced by f as well as by the
// fences ctx already has. A nil f returns ctx unchanged.
func With(ctx context.Context, f Fence) context.Context {
	if f == nil {
		return ctx
	}
	parent, _ := ctx.Value(key{}).(*chain)
	return context.WithValue(ctx, key{}, &chain{f: f, parent: parent})
}

// From returns the fences of ctx combined, or nil when ctx has none.
func From(ctx context.Context) Fence {
	if c, _ := ctx.Value(key{}).(*chain); c != nil {
		return c
	}
	return nil
}

// errHoldEnded is the cause of a fenced request's context when its bound
// ended it.
var errHoldEnded = fmt.Errorf("the fence's hold ended during the request: %w", lease.ErrLost)

// unfenced is Write's done without a fence.
func unfenced(err error) error { return err }

// Write is called by every write just before its request is sent.
// Without a fence in ctx it returns ctx as it is. With one that refuses,
// it returns an error wrapping lease.ErrLost. With one that admits, it
// returns ctx bounded by the remaining time and a done that the write
// calls with its result: done releases the bound and, when the bound
// cancelled the request, wraps the error with lease.ErrLost.
func Write(ctx context.Context) (context.Context, func(error) error, error) {
	c, _ := ctx.Value(key{}).(*chain)
	if c == nil {
		return ctx, unfenced, nil
	}
	left, err := c.Remaining()
	if err != nil {
		return ctx, unfenced, refused(err)
	}
	fctx, cancel := context.WithTimeoutCause(ctx, left, errHoldEnded)
	return fctx, func(err error) error {
		ended := errors.Is(context.Cause(fctx), errHoldEnded)
		cancel()
		if err == nil || !ended {
			return err
		}
		if _, ferr := c.Remaining(); ferr != nil {
			return fmt.Errorf("%w (the hold ended while the request was on its way): %w", refused(ferr), err)
		}
		return fmt.Errorf("fenced: %w: %w", errHoldEnded, err)
	}, nil
}

// refused is the error of a write its fence refused.
func refused(err error) error {
	if errors.Is(err, lease.ErrLost) {
		return fmt.Errorf("fenced: %w", err)
	}
	return fmt.Errorf("fenced: %w: %w", lease.ErrLost, err)
}
