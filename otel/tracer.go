package otel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/kubeloop/kubeloop/trace"
)

// ScopeName is the instrumentation scope of the spans.
const ScopeName = "github.com/kubeloop/kubeloop/otel"

// Attribute keys.
const (
	keyNamespace       = attribute.Key("k8s.namespace.name")
	keyCluster         = attribute.Key("kubeloop.cluster")
	keyController      = attribute.Key("kubeloop.controller")
	keyReconcileID     = attribute.Key("kubeloop.reconcile.id")
	keyRequeues        = attribute.Key("kubeloop.reconcile.requeues")
	keyDroppedLinks    = attribute.Key("kubeloop.reconcile.dropped_links")
	keyRequeue         = attribute.Key("kubeloop.reconcile.requeue")
	keyRequeueAfter    = attribute.Key("kubeloop.reconcile.requeue_after")
	keyKind            = attribute.Key("kubeloop.object.kind")
	keyName            = attribute.Key("kubeloop.object.name")
	keyResourceVersion = attribute.Key("kubeloop.object.resource_version")
	keyEventType       = attribute.Key("kubeloop.event.type")
	keyReceived        = attribute.Key("kubeloop.event.received")
	keyInitialList     = attribute.Key("kubeloop.event.initial_list")
	keyCatchUp         = attribute.Key("kubeloop.event.catch_up")
	keyVerb            = attribute.Key("kubeloop.api.verb")
	keyGroup           = attribute.Key("kubeloop.api.group")
	keyVersion         = attribute.Key("kubeloop.api.version")
	keyResource        = attribute.Key("kubeloop.api.resource")
	keySubresource     = attribute.Key("kubeloop.api.subresource")
	keyMethod          = attribute.Key("http.request.method")
	keyPath            = attribute.Key("url.path")
	keyStatus          = attribute.Key("http.response.status_code")
)

// Tracer is a trace.Tracer that makes OpenTelemetry spans. Create it with
// New.
type Tracer struct {
	tracer     oteltrace.Tracer
	eventSpans bool
	propagator propagation.TextMapPropagator
}

var _ trace.Tracer = (*Tracer)(nil)

// Option configures New.
type Option func(*Tracer)

// WithoutEventSpans makes no span for events: a reconcile's links then
// carry the events' attributes but point at no span.
func WithoutEventSpans() Option { return func(t *Tracer) { t.eventSpans = false } }

// WithPropagator injects each client span's context into its request's
// headers with p (propagation.TraceContext{} writes traceparent). Without
// it, requests carry no trace headers.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(t *Tracer) { t.propagator = p }
}

// New returns a Tracer that makes its spans with tp's tracer of scope
// ScopeName.
func New(tp oteltrace.TracerProvider, opts ...Option) *Tracer {
	t := &Tracer{tracer: tp.Tracer(ScopeName), eventSpans: true}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Event makes the event's span, from its receipt until now, and returns
// the span's context for the reconcile's link; nil WithoutEventSpans.
func (t *Tracer) Event(ev trace.Event) any {
	if !t.eventSpans {
		return nil
	}
	_, span := t.tracer.Start(context.Background(), ev.Kind+" "+string(ev.Type),
		oteltrace.WithNewRoot(),
		oteltrace.WithSpanKind(oteltrace.SpanKindConsumer),
		oteltrace.WithTimestamp(ev.Received),
		oteltrace.WithAttributes(eventAttributes(ev)...))
	span.End()
	return span.SpanContext()
}

// eventAttributes describes ev.
func eventAttributes(ev trace.Event) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		keyEventType.String(string(ev.Type)),
		keyKind.String(ev.Kind),
		keyName.String(ev.Name),
		keyResourceVersion.String(ev.ResourceVersion),
	}
	if ev.Namespace != "" {
		attrs = append(attrs, keyNamespace.String(ev.Namespace))
	}
	if ev.InitialList {
		attrs = append(attrs, keyInitialList.Bool(true))
	}
	if ev.CatchUp {
		attrs = append(attrs, keyCatchUp.Bool(true))
	}
	return attrs
}

// StartReconcile starts the reconcile's span, linked to its events.
func (t *Tracer) StartReconcile(ctx context.Context, r trace.Reconcile) (context.Context, trace.Span) {
	links := make([]oteltrace.Link, 0, len(r.Links))
	for _, ev := range r.Links {
		sc, _ := ev.Link.(oteltrace.SpanContext)
		attrs := append(eventAttributes(ev), keyReceived.String(ev.Received.UTC().Format(time.RFC3339Nano)))
		links = append(links, oteltrace.Link{SpanContext: sc, Attributes: attrs})
	}
	attrs := []attribute.KeyValue{
		keyController.String(r.Controller),
		keyReconcileID.String(r.ID),
		keyName.String(r.Name),
	}
	if r.Namespace != "" {
		attrs = append(attrs, keyNamespace.String(r.Namespace))
	}
	if r.Cluster != "" {
		attrs = append(attrs, keyCluster.String(r.Cluster))
	}
	if r.Requeues > 0 {
		attrs = append(attrs, keyRequeues.Int(r.Requeues))
	}
	if r.DroppedLinks > 0 {
		attrs = append(attrs, keyDroppedLinks.Int(r.DroppedLinks))
	}
	ctx, span := t.tracer.Start(ctx, "reconcile "+r.Controller,
		oteltrace.WithSpanKind(oteltrace.SpanKindInternal),
		oteltrace.WithLinks(links...),
		oteltrace.WithAttributes(attrs...))
	return ctx, reconcileSpan{span}
}

type reconcileSpan struct{ oteltrace.Span }

// End records the reconcile's outcome and ends the span.
func (s reconcileSpan) End(o trace.Outcome) {
	if o.Requeue {
		s.SetAttributes(keyRequeue.Bool(true))
	}
	if o.RequeueAfter > 0 {
		s.SetAttributes(keyRequeueAfter.String(o.RequeueAfter.String()))
	}
	endWith(s.Span, o)
}

// StartCall starts a client span for the request c under ctx's span, and
// injects its context into the request's headers WithPropagator.
func (t *Tracer) StartCall(ctx context.Context, c trace.Call) (context.Context, trace.Span) {
	name := c.Verb + " " + c.Resource
	if c.Subresource != "" {
		name += "/" + c.Subresource
	}
	attrs := []attribute.KeyValue{
		keyVerb.String(c.Verb),
		keyVersion.String(c.Version),
		keyResource.String(c.Resource),
		keyMethod.String(c.Method),
		keyPath.String(c.Path),
	}
	if c.Group != "" {
		attrs = append(attrs, keyGroup.String(c.Group))
	}
	if c.Subresource != "" {
		attrs = append(attrs, keySubresource.String(c.Subresource))
	}
	if c.Namespace != "" {
		attrs = append(attrs, keyNamespace.String(c.Namespace))
	}
	if c.Name != "" {
		attrs = append(attrs, keyName.String(c.Name))
	}
	ctx, span := t.tracer.Start(ctx, name,
		oteltrace.WithSpanKind(oteltrace.SpanKindClient),
		oteltrace.WithAttributes(attrs...))
	if t.propagator != nil && c.Header != nil {
		t.propagator.Inject(ctx, propagation.HeaderCarrier(c.Header))
	}
	return ctx, callSpan{span}
}

type callSpan struct{ oteltrace.Span }

// End records the HTTP status and ends the span.
func (s callSpan) End(o trace.Outcome) {
	if o.StatusCode != 0 {
		s.SetAttributes(keyStatus.Int(o.StatusCode))
	}
	endWith(s.Span, o)
}

// endWith sets span's status from o and ends it.
func endWith(span oteltrace.Span, o trace.Outcome) {
	if o.Err != nil {
		span.RecordError(o.Err)
		span.SetStatus(codes.Error, o.Err.Error())
	}
	span.End()
}
