// Package trace is kubeloop's tracing hook: a small Tracer interface that
// the controller, its sources and the client call when one is set, so
// that a tracing system (OpenTelemetry through the separate module
// github.com/kubeloop/kubeloop/otel) sees each reconcile as a span,
// linked to the watch events that caused it, with a child span for each
// request the reconciler's client sends to the API server. The package
// imports nothing but the standard library; controller-runtime has no
// tracing.
//
// Set manager.Options.Tracer (every controller of the manager takes it)
// or controller.Options.Tracer. Then:
//
//   - Each event a Kind or Channel source hands to the controller's handler
//     is described by an Event (type, kind, namespace/name,
//     resourceVersion, the time it was received), and Tracer.Event is
//     called for it once the handler adds a Request, so the event can be
//     given a span of its own; what it returns travels with the Event.
//   - Each reconcile is a span (Tracer.StartReconcile) whose Reconcile
//     lists the events that led to it. The queue collapses the events of
//     one Request that arrive while it waits into one reconcile: the
//     Reconcile links to them all, up to MaxLinks (the first MaxLinks-1
//     and the latest), and counts the rest in DroppedLinks. A requeue
//     (an error, Requeue, RequeueAfter) has no links.
//   - The reconcile's context holds the Tracer (NewContext), so every
//     HTTP request a kubeloop client sends under it (writes, live reads,
//     a cached client's reads that go to the API server) is a child span
//     (Tracer.StartCall, one per attempt); reads served by the cache send
//     nothing and are not traced, nor are watches. Any code may put a
//     Tracer in a context with NewContext to trace its client calls too.
//
// Guarantees:
//
//   - Off costs nothing measurable: with no Tracer, the per-event and
//     per-reconcile paths do one nil check more than without the hook, and
//     allocate nothing more; a client request does one context lookup.
//   - The events of a Request are kept beside the queue only while a
//     Tracer is set, in a table the worker empties when it takes the
//     Request; a new run of the controller starts with an empty table.
//   - A Tracer's methods are called from many goroutines; Span.End once
//     per started span.
//
// The Tracer sees kubeloop's own vocabulary, not OpenTelemetry's, so the
// library needs no new dependency; tracetest.Recorder records what a
// Tracer is told, for tests.
package trace
