// Package tracetest records what kubeloop tells a trace.Tracer, for tests:
// a faithful in-memory Tracer whose spans know their parent.
package tracetest

import (
	"context"
	"slices"
	"sync"

	"github.com/kubeloop/kubeloop/trace"
)

// Recorder is a trace.Tracer that records every event, reconcile and call
// it is told of. Its zero value is ready to use.
type Recorder struct {
	mu     sync.Mutex
	events []trace.Event
	spans  []*Span
}

var _ trace.Tracer = (*Recorder)(nil)

// Span is a recorded span: a reconcile's (Reconcile set) or a call's
// (Call set).
type Span struct {
	// Reconcile is set for a reconcile's span, Call for a call's.
	Reconcile *trace.Reconcile
	Call      *trace.Call
	// Parent is the span that the context given to Start held, or nil.
	Parent *Span

	r       *Recorder
	ended   bool
	outcome trace.Outcome
}

// EventLink is what Recorder.Event returns: the index of the event among
// Events, kept in the trace.Event's Link.
type EventLink int

// Event records ev and returns its EventLink.
func (r *Recorder) Event(ev trace.Event) any {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return EventLink(len(r.events) - 1)
}

type spanKey struct{}

// StartReconcile records the start of a reconcile's span.
func (r *Recorder) StartReconcile(ctx context.Context, rec trace.Reconcile) (context.Context, trace.Span) {
	rec.Links = slices.Clone(rec.Links)
	return r.start(ctx, &Span{Reconcile: &rec})
}

// StartCall records the start of a call's span.
func (r *Recorder) StartCall(ctx context.Context, c trace.Call) (context.Context, trace.Span) {
	c.Header = c.Header.Clone()
	return r.start(ctx, &Span{Call: &c})
}

func (r *Recorder) start(ctx context.Context, s *Span) (context.Context, trace.Span) {
	s.r = r
	s.Parent, _ = ctx.Value(spanKey{}).(*Span)
	r.mu.Lock()
	r.spans = append(r.spans, s)
	r.mu.Unlock()
	return context.WithValue(ctx, spanKey{}, s), s
}

// End records the span's outcome. A second End panics: the hook's
// contract is one End per span.
func (s *Span) End(o trace.Outcome) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if s.ended {
		panic("tracetest: span ended twice")
	}
	s.ended, s.outcome = true, o
}

// Ended reports whether End was called, and with what.
func (s *Span) Ended() (trace.Outcome, bool) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	return s.outcome, s.ended
}

// Events returns the events recorded so far.
func (r *Recorder) Events() []trace.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Reconciles returns the reconcile spans recorded so far, in start order.
func (r *Recorder) Reconciles() []*Span {
	return r.filter(func(s *Span) bool { return s.Reconcile != nil })
}

// Calls returns the call spans recorded so far, in start order.
func (r *Recorder) Calls() []*Span {
	return r.filter(func(s *Span) bool { return s.Call != nil })
}

// Children returns the spans whose parent is s.
func (r *Recorder) Children(s *Span) []*Span {
	return r.filter(func(c *Span) bool { return c.Parent == s })
}

func (r *Recorder) filter(keep func(*Span) bool) []*Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*Span
	for _, s := range r.spans {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// Len returns how many events and spans were recorded: 0 means the
// Tracer was never called.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events) + len(r.spans)
}
