package gate

import (
	"context"
	"sync"
	"time"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/lease"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// Term is one hold of the shard Lease, from its acquisition until it is
// lost or released. Each term has its own lease.Holder: the fence of a
// reconcile admitted in one term (its Holder) never admits a write again
// once that term ended, whatever later terms do.
type Term struct {
	// N numbers the terms from 1.
	N int
	// Holder holds the Lease in this term.
	Holder *lease.Holder
	// Ctx ends when the term ends: lost, released or about to lapse.
	Ctx context.Context
	end context.CancelFunc
	// Rejoined: this shard's name held the Lease before this term (a
	// rejoin after a loss, or a new process taking over the Lease of an
	// earlier one with the same shard name), so the sharder may have moved
	// objects of this shard while it was out. The term then admits only
	// MoveWindow after the acquisition and confirms assignments.
	Rejoined bool
	// Reader is what the gate reads objects with in this term: the cache
	// that feeds the reconcilers, or the live client.
	Reader client.Reader
	// confirmed are the keys whose assignment a live read confirmed in
	// this term (only when Rejoined); guarded by Gate.mu.
	confirmed map[string]struct{}
}

// Gate is the admission state of one shard.
type Gate struct {
	spec *spec.Spec
	mode Mode // nil in Labels mode

	mu          sync.Mutex
	cur         *Term         // the current (or last) term; nil before the first
	accepting   bool          // cur admits reconciles
	admitting   chan struct{} // closed once the shard first admits reconciles
	admittedYet bool
	inflight    int
	idle        *sync.Cond
	handedOver  map[string]struct{} // keys acknowledged, until their NotFound
}

// New returns the gate of s's shard; mode, when not nil, decides the
// reconciles of a term (ServerSide mode).
func New(s *spec.Spec, mode Mode) *Gate {
	g := &Gate{spec: s, mode: mode, admitting: make(chan struct{}), handedOver: map[string]struct{}{}}
	g.idle = sync.NewCond(&g.mu)
	return g
}

// Begin makes a term of holder, which has just acquired the Lease, the
// current one, reading through reader (nil: the live client); it admits
// nothing yet (see Open). The previous term ends.
func (g *Gate) Begin(n int, holder *lease.Holder, rejoined bool, reader client.Reader) *Term {
	if reader == nil {
		reader = g.spec.C
	}
	t := &Term{N: n, Holder: holder, Rejoined: rejoined, Reader: reader}
	t.Ctx, t.end = context.WithCancel(context.Background())
	if rejoined {
		t.confirmed = map[string]struct{}{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cur != nil {
		g.cur.end()
	}
	g.cur = t
	return t
}

// Open opens the gate for t, if t is still the current term and valid;
// it reports whether it did.
func (g *Gate) Open(t *Term) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cur != t || t.Ctx.Err() != nil || !t.Holder.Valid(time.Now()) {
		return false
	}
	g.accepting = true
	if !g.admittedYet {
		g.admittedYet = true
		close(g.admitting)
	}
	return true
}

// End ends the current term, if any: its reconciles' contexts end.
func (g *Gate) End() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.accepting = false
	if g.cur != nil {
		g.cur.end()
	}
}

// Close stops admitting reconciles and, with wait, waits until none is in
// flight or the current term's hold stops being valid; it reports whether
// none is in flight. It then ends the term: in-flight reconciles see their
// context end (their writes are refused by the term's fence already, once
// the hold is no longer valid).
func (g *Gate) Close(wait bool) bool {
	g.mu.Lock()
	g.accepting = false
	t := g.cur
	if wait && t != nil {
		stop := context.AfterFunc(t.Ctx, func() {
			g.mu.Lock()
			g.idle.Broadcast()
			g.mu.Unlock()
		})
		timer := time.AfterFunc(time.Until(t.Holder.Deadline()), t.end)
		for g.inflight > 0 && t.Ctx.Err() == nil {
			g.idle.Wait()
		}
		timer.Stop()
		stop()
	}
	idle := g.inflight == 0
	g.mu.Unlock()
	if t != nil {
		t.end()
	}
	return idle
}

// Current returns the current (or last) term, and whether it admits now;
// nil before the first.
func (g *Gate) Current() (*Term, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cur == nil {
		return nil, false
	}
	return g.cur, g.accepting && g.cur.Holder.Valid(time.Now())
}

// Enter admits a reconcile when the shard holds its Lease, admits
// reconciles and is not stopping; it returns the current term, or nil.
// A call that comes while the shard is still acquiring its first Lease
// waits for it up to RetryPeriod: the caches sync and the controllers
// start while the shard acquires its Lease, and without the wait every
// object of a starting replica would be requeued for RetryPeriod
// (BenchmarkShardedThroughput in bench/sharding showed 2 s of a 3.6 s
// cold start spent so). Leave must follow an admission.
func (g *Gate) Enter(ctx context.Context) *Term {
	if t := g.enter(); t != nil {
		return t
	}
	if !g.awaitLease(ctx) {
		return nil
	}
	return g.enter()
}

func (g *Gate) enter() *Term {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.accepting || g.cur == nil || !g.cur.Holder.Valid(time.Now()) {
		return nil
	}
	g.inflight++
	return g.cur
}

// awaitLease waits, at most RetryPeriod, until the shard first holds its
// Lease, and reports whether it has. After the shard stopped it returns
// true at once, and enter refuses.
func (g *Gate) awaitLease(ctx context.Context) bool {
	t := time.NewTimer(g.spec.RetryPeriod)
	defer t.Stop()
	select {
	case <-g.admitting:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}

// Leave ends an admission of Enter.
func (g *Gate) Leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
	if g.inflight == 0 {
		g.idle.Broadcast()
	}
}

// Fenced returns ctx fenced by t's hold (client.WithFence) and cancelled
// when t ends; call the CancelFunc when the work ends.
func Fenced(ctx context.Context, t *Term) (context.Context, context.CancelFunc) {
	wctx, cancel := context.WithCancel(client.WithFence(ctx, t.Holder))
	stop := context.AfterFunc(t.Ctx, cancel)
	return wctx, func() {
		stop()
		cancel()
	}
}
