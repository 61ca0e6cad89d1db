package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kubeloop/kubeloop/internal/lease"
)

// ErrLeaseLost is wrapped by the error of a write that its Fence refused
// (the hold it depends on is no longer valid), and of a write whose
// request the Fence's bound cancelled. It is the same sentinel as
// sharding.ErrLeaseLost, and leaderelection's lost-leadership error wraps
// it too, so errors.Is(err, client.ErrLeaseLost) answers for all of them.
var ErrLeaseLost = lease.ErrLost

// Fence says whether a write may be sent now: it is the hold (a leader's
// or a shard's Lease) that the write depends on. Remaining returns how long
// the hold stays valid from now, by the local monotonic clock (time.Now);
// when no write may be sent now it returns an error, which should wrap
// ErrLeaseLost and name the lease (the client wraps it in ErrLeaseLost
// when it does not). It is called just before each write and must be safe
// for concurrent use. A remaining time of zero or less counts as refused.
//
// The manager puts its election's fence into the context of leader-only
// runnables, and the sharding ring puts the shard's into the context of
// every gated reconcile; see WithFence.
type Fence interface {
	Remaining() (time.Duration, error)
}

// FenceFunc adapts a function to Fence.
type FenceFunc func() (time.Duration, error)

// Remaining calls f.
func (f FenceFunc) Remaining() (time.Duration, error) { return f() }

var _ Fence = FenceFunc(nil)

type fenceKey struct{}

// fenceChain is the fences of a context, innermost first.
type fenceChain struct {
	f      Fence
	parent *fenceChain
}

var _ Fence = (*fenceChain)(nil)

// Remaining asks every fence of the chain: the first refusal wins,
// otherwise the shortest remaining time.
func (c *fenceChain) Remaining() (time.Duration, error) {
	left := time.Duration(math.MaxInt64)
	for ; c != nil; c = c.parent {
		d, err := c.f.Remaining()
		if err != nil {
			return 0, err
		}
		if d <= 0 {
			return 0, fmt.Errorf("%w: no time left (%T)", ErrLeaseLost, c.f)
		}
		left = min(left, d)
	}
	return left, nil
}

// WithFence returns a context whose writes are fenced by f: every write of
// the live client (Create, Update, Patch, Apply, Delete, DeleteAllOf,
// Status() and SubResource() writes, and so every wrapper and the cached
// client, which delegate their writes to it) asks f just before its
// request is sent, fails with an error wrapping ErrLeaseLost and naming the
// object when f refuses, and otherwise sends the request with its context
// bounded by f's remaining time, so that a request still waiting for an
// answer when the hold ends is cancelled. Reads are never fenced.
//
// Fences nest: a context fenced twice needs both to admit a write, and is
// bounded by the shorter time. A nil f returns ctx unchanged.
func WithFence(ctx context.Context, f Fence) context.Context {
	if f == nil {
		return ctx
	}
	parent, _ := ctx.Value(fenceKey{}).(*fenceChain)
	return context.WithValue(ctx, fenceKey{}, &fenceChain{f: f, parent: parent})
}

// FenceFrom returns the fence of ctx (every fence added with WithFence,
// combined), or nil when ctx has none.
func FenceFrom(ctx context.Context) Fence {
	if c, _ := ctx.Value(fenceKey{}).(*fenceChain); c != nil {
		return c
	}
	return nil
}

// errHoldEnded is the cause of a fenced request's context when its bound
// ended it.
var errHoldEnded = fmt.Errorf("the fence's hold ended during the request: %w", ErrLeaseLost)

// unfenced is fenceWrite's done without a fence.
func unfenced(err error) error { return err }

// fenceWrite is called by every write just before its request is sent.
// Without a fence in ctx (one ctx.Value lookup) it returns ctx as it is.
// With one that refuses, it returns an error wrapping ErrLeaseLost. With
// one that admits, it returns ctx bounded by the remaining time and a done
// that the write calls with its result: done releases the bound and, when
// the bound cancelled the request, wraps the error with ErrLeaseLost.
func fenceWrite(ctx context.Context) (context.Context, func(error) error, error) {
	c, _ := ctx.Value(fenceKey{}).(*fenceChain)
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
	if errors.Is(err, ErrLeaseLost) {
		return fmt.Errorf("fenced: %w", err)
	}
	return fmt.Errorf("fenced: %w: %w", ErrLeaseLost, err)
}
