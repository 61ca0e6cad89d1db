// Package otel adapts an OpenTelemetry TracerProvider to kubeloop's
// tracing hook (github.com/kubeloop/kubeloop/trace). It lives in a module
// of its own, so the library itself does not depend on OpenTelemetry:
// only an operator that imports this package does.
//
//	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter))
//	mgr, err := manager.New(cfg, manager.Options{Tracer: otel.New(tp)})
//
// What it makes:
//
//   - An event span ("<Kind> <type>", kind consumer, a new root) for each
//     watch event that made a traced controller's handler add a Request:
//     it starts when the source received the event and ends when the
//     handler added its first Request. WithoutEventSpans leaves them out.
//   - A reconcile span ("reconcile <controller>", kind internal) for each
//     reconcile, with a link to each event that led to it (at most
//     trace.MaxLinks; each link carries the event's type, kind, object,
//     resourceVersion and receive time, and points at its event span).
//     Its status is Error when Reconcile returned an error.
//   - A client span ("<verb> <resource>[/<subresource>]", kind client)
//     for each request a kubeloop client sends to the API server inside a
//     reconcile, a child of the reconcile span, with the HTTP method, path
//     and status. With WithPropagator the request carries the span's
//     context (traceparent), so an API server with tracing on continues
//     the trace.
//
// Attribute names: k8s.namespace.name (OpenTelemetry's), and kubeloop.*
// for the rest (kubeloop.controller, kubeloop.reconcile.id,
// kubeloop.object.kind, kubeloop.object.name,
// kubeloop.object.resource_version, kubeloop.event.type, ...), listed
// beside the functions that set them.
//
// Guarantees:
//
//   - No global state: the TracerProvider and propagator are the ones
//     given; nothing is read from go.opentelemetry.io/otel's globals.
//   - Every span started is ended, once.
//   - Safe for concurrent use, as trace.Tracer requires.
package otel
