package source

import (
	"context"
	"errors"
	"sync"

	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
)

// Source is a stream of events that a controller watches.
type Source interface {
	// Start begins delivering events to q until ctx ends. It must not
	// block. A controller calls it once per run: again, with a new q, only
	// after the ctx of the previous call ended (a manager with
	// LeaderElectionRecampaign restarts its controllers each leader term).
	// Kind, WaitForCRD, Channel and Func sources accept that; a source that
	// cannot be started again returns an error, and the controller's Start
	// fails with it.
	Start(ctx context.Context, q handler.Queue) error
	// WaitForSync blocks until the source has delivered its initial state,
	// or ctx ends, in which case it returns an error.
	WaitForSync(ctx context.Context) error
}

// Preparer is a Source with work to do when the controller is built, before
// it starts: Kind obtains its informer there. controller.Watch calls
// Prepare once, before Start.
type Preparer interface {
	Prepare(ctx context.Context) error
}

// ErrStarted is returned (wrapped) by Start when a source is started again
// while the ctx of its previous Start is live.
var ErrStarted = errors.New("source: already started")

// Func is a Source made of a function, called by Start. It must not block;
// it may start goroutines that end with ctx. It has no initial state to
// wait for.
type Func func(ctx context.Context, q handler.Queue) error

var _ Source = Func(nil)

// Start calls f(ctx, q).
func (f Func) Start(ctx context.Context, q handler.Queue) error { return f(ctx, q) }

// WaitForSync returns nil at once.
func (Func) WaitForSync(context.Context) error { return nil }

// ChannelSource is the Source returned by Channel.
type ChannelSource struct {
	ch      <-chan handler.GenericEvent
	handler handler.EventHandler
	preds   []predicate.Predicate

	mu  sync.Mutex
	ctx context.Context // the latest Start's; nil before Start
}

var _ Source = (*ChannelSource)(nil)

// ChannelOption configures Channel.
type ChannelOption func(*ChannelSource)

// WithPredicates filters the events of a Channel source.
func WithPredicates(preds ...predicate.Predicate) ChannelOption {
	return func(c *ChannelSource) { c.preds = append(c.preds, preds...) }
}

// Channel returns a Source that hands every GenericEvent received on ch to
// h.Generic, until ch is closed or the context given to Start ends. Use it
// to reconcile on triggers from outside the cluster (a webhook, a timer, an
// external system): send handler.GenericEvent{Object: obj} with obj's
// namespace and name set.
func Channel(ch <-chan handler.GenericEvent, h handler.EventHandler, opts ...ChannelOption) *ChannelSource {
	c := &ChannelSource{ch: ch, handler: h}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

// Start starts the goroutine that receives from the channel until ctx
// ends. It may be called again once that ctx has ended; values sent while
// no Start runs wait in the channel.
func (c *ChannelSource) Start(ctx context.Context, q handler.Queue) error {
	if c.ch == nil {
		return errors.New("source: Channel has a nil channel")
	}
	if c.handler == nil {
		return errors.New("source: Channel has a nil handler")
	}
	c.mu.Lock()
	if c.ctx != nil && c.ctx.Err() == nil {
		c.mu.Unlock()
		return ErrStarted
	}
	c.ctx = ctx
	c.mu.Unlock()
	go c.run(ctx, q)
	return nil
}

func (c *ChannelSource) run(ctx context.Context, q handler.Queue) {
	for {
		select {
		case <-ctx.Done():
			return
		case evt, ok := <-c.ch:
			if !ok {
				return
			}
			if evt.Object == nil || !allowGeneric(c.preds, evt) {
				continue
			}
			c.handler.Generic(ctx, evt, q)
		}
	}
}

// WaitForSync returns nil at once: a channel has no initial state.
func (*ChannelSource) WaitForSync(context.Context) error { return nil }

func allowGeneric(preds []predicate.Predicate, evt handler.GenericEvent) bool {
	for _, p := range preds {
		if !p.Generic(evt) {
			return false
		}
	}
	return true
}
