package trace

import (
	"context"
	"net/http"
	"time"
)

// Tracer is the hook through which kubeloop reports what it does to a
// tracing system. Set it in manager.Options.Tracer (or
// controller.Options.Tracer); nil means tracing is off. The OpenTelemetry
// adapter, github.com/kubeloop/kubeloop/otel, is one; tracetest.Recorder
// records for tests. Every method may be called from several goroutines at
// once and must not block.
type Tracer interface {
	// Event is called once for each watch event (or Channel event) that
	// made a traced controller's handler add at least one Request, on the
	// goroutine that delivers the source's events. What it returns is
	// kept in the Event's Link when the Event is handed back among
	// Reconcile.Links: an OpenTelemetry adapter returns the span context
	// of a span it made for the event. It may return nil.
	Event(ev Event) any
	// StartReconcile starts the span of one reconcile; ctx is the
	// reconcile's context. The returned context, which must be derived
	// from ctx, is the one the Reconciler is given; the controller puts
	// the Tracer in it (NewContext) first, so that the client's requests
	// inside the reconcile become child spans.
	StartReconcile(ctx context.Context, r Reconcile) (context.Context, Span)
	// StartCall starts the span of one request that a client sends to the
	// API server, under the span that ctx holds. The returned context is
	// the request's from then on.
	StartCall(ctx context.Context, c Call) (context.Context, Span)
}

// Span is an operation a Tracer is timing.
type Span interface {
	// End ends the span with the operation's outcome. It is called once.
	End(o Outcome)
}

// Outcome is how a span's operation ended.
type Outcome struct {
	// Err is the error the operation returned; nil means success. For a
	// Call it is the transport's error, or an error naming the HTTP
	// status when the server answered 400 or above.
	Err error
	// StatusCode is a Call's HTTP status; 0 for a reconcile, or when no
	// answer came.
	StatusCode int
	// Requeue and RequeueAfter are a reconcile's Result fields.
	Requeue      bool
	RequeueAfter time.Duration
}

// EventType is what happened to the object of an Event: the names of the
// handler's events.
type EventType string

// The types of Event.
const (
	EventCreate  EventType = "create"
	EventUpdate  EventType = "update"
	EventDelete  EventType = "delete"
	EventGeneric EventType = "generic"
)

// Event identifies one event a source handed to a traced controller's
// handler.
type Event struct {
	// Type is what happened.
	Type EventType
	// Kind is the source's kind as it names it ("ConfigMap", or
	// "Widget.example.com" for an object that carries its group).
	Kind string
	// Namespace, Name and ResourceVersion are the event's object's; an
	// update's are the new object's.
	Namespace, Name, ResourceVersion string
	// Received is when the source received the event from its informer
	// (or channel), before predicates and handler ran.
	Received time.Time
	// InitialList is set for a create of the informer's initial list;
	// CatchUp for an event of the backlog after an outage (see
	// handler.UpdateEvent.CatchUp).
	InitialList, CatchUp bool
	// Link is what Tracer.Event returned for this event.
	Link any
}

// MaxLinks bounds the Events a Reconcile links to. The queue collapses
// the events of one Request that arrive before a worker takes it into one
// reconcile; the reconcile links the first MaxLinks-1 of them and the
// latest (whose object version it reads), and counts the others in
// DroppedLinks.
const MaxLinks = 8

// Reconcile describes one reconcile of a Request by a controller.
type Reconcile struct {
	// Controller is the controller's name.
	Controller string
	// Cluster, Namespace and Name are the Request's (Cluster "" is the
	// manager's own cluster).
	Cluster, Namespace, Name string
	// ID is the reconcile's ID, the reconcileID of its log lines.
	ID string
	// Requeues is how often the Request has been requeued by a failure (or
	// Result.Requeue) since it last succeeded; 0 for a first attempt.
	Requeues int
	// Links are the events that led to this reconcile, oldest first, at
	// most MaxLinks: empty for a requeue, or a Request added by something
	// other than a traced source's handler.
	Links []Event
	// DroppedLinks counts the events collapsed into this reconcile beyond
	// MaxLinks.
	DroppedLinks int
}

// Call describes one request a client sends to the API server. The client
// traces every request it sends (reads the cache serves send none),
// except watches.
type Call struct {
	// Verb is the Kubernetes verb: get, list, create, update, patch,
	// delete or deletecollection.
	Verb string
	// Method and Path are the HTTP request's (the path without its query).
	Method, Path string
	// Group, Version, Resource and Subresource name what the request is
	// about (Group "" for the core group).
	Group, Version, Resource, Subresource string
	// Namespace and Name are the object's ("" for a collection or a
	// cluster-scoped object).
	Namespace, Name string
	// Header is the request's header, a copy owned by this request: a
	// Tracer may add propagation headers (traceparent) to it, which an API
	// server with tracing on continues.
	Header http.Header
}

type tracerKey struct{}

// NewContext returns a copy of ctx that holds t: a client's requests
// under it start spans with t.StartCall. A traced controller does this for
// every reconcile.
func NewContext(ctx context.Context, t Tracer) context.Context {
	return context.WithValue(ctx, tracerKey{}, t)
}

// FromContext returns the Tracer that ctx holds, or nil.
func FromContext(ctx context.Context) Tracer {
	t, _ := ctx.Value(tracerKey{}).(Tracer)
	return t
}
