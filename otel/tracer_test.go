package otel_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kubeloop/kubeloop/otel"
	"github.com/kubeloop/kubeloop/trace"
)

func newTracer(opts ...otel.Option) (*otel.Tracer, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	return otel.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), opts...), rec
}

func attrs(kvs []attribute.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.Emit()
	}
	return out
}

func TestReconcileSpanLinksEventsAndEndsWithTheOutcome(t *testing.T) {
	tr, rec := newTracer()
	ev := trace.Event{Type: trace.EventUpdate, Kind: "ConfigMap", Namespace: "ns", Name: "a", ResourceVersion: "7",
		Received: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	ev.Link = tr.Event(ev)
	ctx, span := tr.StartReconcile(context.Background(), trace.Reconcile{
		Controller: "c", Namespace: "ns", Name: "a", ID: "id-1", Requeues: 2, Links: []trace.Event{ev}, DroppedLinks: 3})
	_, call := tr.StartCall(ctx, trace.Call{Verb: "patch", Method: "PATCH", Path: "/api/v1/namespaces/ns/configmaps/a",
		Version: "v1", Resource: "configmaps", Namespace: "ns", Name: "a"})
	call.End(trace.Outcome{StatusCode: 409, Err: errors.New("HTTP 409")})
	span.End(trace.Outcome{Err: errors.New("conflict"), RequeueAfter: time.Second})

	ended := rec.Ended()
	require.Len(t, ended, 3)
	event, client, reconcile := ended[0], ended[1], ended[2]
	assert.Equal(t, "ConfigMap update", event.Name())
	assert.Equal(t, ev.Received, event.StartTime(), "the event span starts when the source received it")
	assert.False(t, event.Parent().IsValid(), "an event span is a root")

	require.Len(t, reconcile.Links(), 1)
	assert.Equal(t, event.SpanContext(), reconcile.Links()[0].SpanContext)
	assert.Equal(t, "7", attrs(reconcile.Links()[0].Attributes)["kubeloop.object.resource_version"])
	assert.Equal(t, "2026-01-02T03:04:05Z", attrs(reconcile.Links()[0].Attributes)["kubeloop.event.received"])
	ra := attrs(reconcile.Attributes())
	assert.Equal(t, "id-1", ra["kubeloop.reconcile.id"])
	assert.Equal(t, "2", ra["kubeloop.reconcile.requeues"])
	assert.Equal(t, "3", ra["kubeloop.reconcile.dropped_links"])
	assert.Equal(t, "1s", ra["kubeloop.reconcile.requeue_after"])
	assert.Equal(t, codes.Error, reconcile.Status().Code)

	assert.Equal(t, "patch configmaps", client.Name())
	assert.Equal(t, reconcile.SpanContext().SpanID(), client.Parent().SpanID())
	assert.Equal(t, "409", attrs(client.Attributes())["http.response.status_code"])
	assert.Equal(t, codes.Error, client.Status().Code)
}

func TestWithoutEventSpansLinksCarryAttributesOnly(t *testing.T) {
	tr, rec := newTracer(otel.WithoutEventSpans())
	ev := trace.Event{Type: trace.EventCreate, Kind: "Secret", Name: "s", ResourceVersion: "1", Received: time.Now()}
	assert.Nil(t, tr.Event(ev))
	_, span := tr.StartReconcile(context.Background(), trace.Reconcile{Controller: "c", Links: []trace.Event{ev}})
	span.End(trace.Outcome{})
	ended := rec.Ended()
	require.Len(t, ended, 1)
	require.Len(t, ended[0].Links(), 1, "kept for its attributes")
	assert.False(t, ended[0].Links()[0].SpanContext.IsValid())
	assert.Equal(t, codes.Unset, ended[0].Status().Code)
}

func TestWithPropagatorInjectsTraceparent(t *testing.T) {
	tr, rec := newTracer(otel.WithPropagator(propagation.TraceContext{}))
	h := http.Header{}
	_, span := tr.StartCall(context.Background(), trace.Call{Verb: "get", Resource: "pods", Header: h})
	span.End(trace.Outcome{StatusCode: 200})
	require.Len(t, rec.Ended(), 1)
	tp := h.Get("traceparent")
	assert.Contains(t, tp, rec.Ended()[0].SpanContext().TraceID().String())
	assert.Contains(t, tp, rec.Ended()[0].SpanContext().SpanID().String())

	tr, _ = newTracer()
	h = http.Header{}
	_, span = tr.StartCall(context.Background(), trace.Call{Verb: "get", Resource: "pods", Header: h})
	span.End(trace.Outcome{})
	assert.Empty(t, h, "no propagator: no headers")
}
