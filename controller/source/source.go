package source

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/reconcile"
)

// TypedSource is a stream of events that a controller watches, adding
// requests of type request to its queue. kubeloop's controllers queue
// reconcile.Request: they watch a Source, the TypedSource of
// reconcile.Request. The type parameter is controller-runtime's, for
// ported code.
type TypedSource[request comparable] interface {
	// Start begins delivering events to q until ctx ends. It must not
	// block. A controller calls it once per run: again, with a new q, only
	// after the ctx of the previous call ended (a manager with
	// LeaderElectionRecampaign restarts its controllers each leader term).
	// Kind, WaitForCRD, Channel and Func sources accept that; a source that
	// cannot be started again returns an error, and the controller's Start
	// fails with it.
	Start(ctx context.Context, q handler.TypedQueue[request]) error
	// WaitForSync blocks until the source has delivered its initial state,
	// or ctx ends, in which case it returns an error.
	WaitForSync(ctx context.Context) error
}

// Source is the TypedSource of reconcile.Request: what a controller
// watches.
type Source = TypedSource[reconcile.Request]

// Preparer is a Source with work to do when the controller is built, before
// it starts: Kind obtains its informer there. controller.Watch calls
// Prepare once, before Start.
type Preparer interface {
	Prepare(ctx context.Context) error
}

// ErrStarted is returned (wrapped) by Start when a source is started again
// while the ctx of its previous Start is live.
var ErrStarted = errors.New("source: already started")

// TypedFunc is a TypedSource made of a function, called by Start. It must
// not block; it may start goroutines that end with ctx. It has no initial
// state to wait for.
type TypedFunc[request comparable] func(ctx context.Context, q handler.TypedQueue[request]) error

// Func is the TypedFunc of reconcile.Request.
type Func = TypedFunc[reconcile.Request]

var _ Source = Func(nil)

// Start calls f(ctx, q).
func (f TypedFunc[request]) Start(ctx context.Context, q handler.TypedQueue[request]) error {
	return f(ctx, q)
}

// WaitForSync returns nil at once.
func (TypedFunc[request]) WaitForSync(context.Context) error { return nil }

// ChannelSource is the Source returned by Channel.
type ChannelSource struct {
	// err is a mistake found by Channel (a nil channel or handler).
	err error
	// run receives from the channel until ctx ends or it is closed.
	run func(ctx context.Context, q handler.Queue)

	mu  sync.Mutex
	ctx context.Context // the latest Start's; nil before Start
}

var _ Source = (*ChannelSource)(nil)

// ChannelOpt configures Channel and TypedChannel; the type parameters are
// controller-runtime's (the request type only shapes the option).
type ChannelOpt[object any, request comparable] func(*channelOptions[object])

// ChannelOption is the ChannelOpt of client.Object and reconcile.Request.
type ChannelOption = ChannelOpt[client.Object, reconcile.Request]

type channelOptions[object any] struct {
	preds []predicate.TypedPredicate[object]
}

// WithPredicates filters the events of a Channel source. As in
// controller-runtime, give the type parameters:
// source.WithPredicates[client.Object, reconcile.Request](p).
func WithPredicates[object any, request comparable](preds ...predicate.TypedPredicate[object]) ChannelOpt[object, request] {
	return func(o *channelOptions[object]) { o.preds = append(o.preds, preds...) }
}

// WithBufferSize is accepted for controller-runtime's sake and does
// nothing: kubeloop's Channel source hands each event to its one handler
// as it is received, so there is no distribution buffer to size; the
// channel's own capacity is the buffer.
func WithBufferSize[object any, request comparable](int) ChannelOpt[object, request] {
	return func(*channelOptions[object]) {}
}

// Channel returns a Source that hands every event received on ch to
// h.Generic, until ch is closed or the context given to Start ends. Use it
// to reconcile on triggers from outside the cluster (a webhook, a timer, an
// external system): send handler.GenericEvent{Object: obj} with obj's
// namespace and name set. The object type is inferred from ch and h: a
// channel of handler.TypedGenericEvent[*v1.Foo] goes with a
// TypedEventHandler of *v1.Foo. Events without an object are dropped.
func Channel[object any](ch <-chan handler.TypedGenericEvent[object], h handler.TypedEventHandler[object, reconcile.Request], opts ...ChannelOpt[object, reconcile.Request]) *ChannelSource {
	var o channelOptions[object]
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	var errs []error
	if ch == nil {
		errs = append(errs, errors.New("source: Channel has a nil channel"))
	}
	if h == nil {
		errs = append(errs, errors.New("source: Channel has a nil handler"))
	}
	for _, p := range o.preds {
		if p == nil {
			errs = append(errs, errors.New("source: Channel was given a nil predicate"))
		}
	}
	c := &ChannelSource{err: errors.Join(errs...)}
	c.run = func(ctx context.Context, q handler.Queue) {
		traced, _ := q.(EventQueue) // trace.go
		for {
			select {
			case <-ctx.Done():
				return
			case evt, ok := <-ch:
				if !ok {
					return
				}
				if isNil(evt.Object) || !allowGeneric(o.preds, evt) {
					continue
				}
				eq := q
				if traced != nil {
					eq = traced.ForEvent(genericEvent(evt.Object))
				}
				h.Generic(ctx, evt, eq)
			}
		}
	}
	return c
}

// TypedChannel is Channel with controller-runtime's request type
// parameter. With reconcile.Request it returns Channel's source; with any
// other request type it returns a source whose Start and WaitForSync fail
// with an error saying so, since kubeloop's queue holds reconcile.Request.
func TypedChannel[object any, request comparable](ch <-chan handler.TypedGenericEvent[object], h handler.TypedEventHandler[object, request], opts ...ChannelOpt[object, request]) TypedSource[request] {
	rh, ok := any(h).(handler.TypedEventHandler[object, reconcile.Request])
	if !ok && h != nil {
		return unsupported[request]{what: "TypedChannel"}
	}
	ropts := make([]ChannelOpt[object, reconcile.Request], len(opts))
	for i, opt := range opts {
		ropts[i] = ChannelOpt[object, reconcile.Request](opt)
	}
	src, ok := any(Channel(ch, rh, ropts...)).(TypedSource[request])
	if !ok {
		return unsupported[request]{what: "TypedChannel"}
	}
	return src
}

// Start starts the goroutine that receives from the channel until ctx
// ends. It may be called again once that ctx has ended; values sent while
// no Start runs wait in the channel.
func (c *ChannelSource) Start(ctx context.Context, q handler.Queue) error {
	if c.err != nil {
		return c.err
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

// WaitForSync returns nil at once: a channel has no initial state.
func (*ChannelSource) WaitForSync(context.Context) error { return nil }

func allowGeneric[T any](preds []predicate.TypedPredicate[T], evt handler.TypedGenericEvent[T]) bool {
	for _, p := range preds {
		if !p.Generic(evt) {
			return false
		}
	}
	return true
}

// isNil reports whether v is a nil interface or a nil pointer.
func isNil[T any](v T) bool {
	a := any(v)
	if a == nil {
		return true
	}
	rv := reflect.ValueOf(a)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// unsupported is the source of TypedKind and TypedChannel for a request
// type other than reconcile.Request.
type unsupported[request comparable] struct{ what string }

func (u unsupported[request]) err() error {
	return fmt.Errorf("source: %s: request type %s is not supported: kubeloop's controllers queue reconcile.Request only (use reconcile.Request)",
		u.what, reflect.TypeFor[request]())
}

// Start fails: the request type is not reconcile.Request.
func (u unsupported[request]) Start(context.Context, handler.TypedQueue[request]) error {
	return u.err()
}

// WaitForSync fails: the request type is not reconcile.Request.
func (u unsupported[request]) WaitForSync(context.Context) error { return u.err() }
