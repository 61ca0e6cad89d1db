package client

import (
	"context"
	"time"

	"github.com/kubeloop/kubeloop/client/internal/fence"
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
	return fence.With(ctx, f)
}

// FenceFrom returns the fence of ctx (every fence added with WithFence,
// combined), or nil when ctx has none.
func FenceFrom(ctx context.Context) Fence {
	if f := fence.From(ctx); f != nil {
		return f
	}
	return nil
}
