package trace_test

import (
	"context"
	"fmt"

	"github.com/kubeloop/kubeloop/trace"
)

// logTracer is a Tracer that prints what it is told: the shape of an
// adapter to a tracing system (the otel module's is one).
type logTracer struct{}

func (logTracer) Event(ev trace.Event) any {
	fmt.Printf("event %s %s %s/%s\n", ev.Type, ev.Kind, ev.Namespace, ev.Name)
	return ev.Name // travels back in the Reconcile's Links
}

func (logTracer) StartReconcile(ctx context.Context, r trace.Reconcile) (context.Context, trace.Span) {
	fmt.Printf("reconcile %s %s/%s, caused by %d event(s)\n", r.Controller, r.Namespace, r.Name, len(r.Links))
	return ctx, span("reconcile")
}

func (logTracer) StartCall(ctx context.Context, c trace.Call) (context.Context, trace.Span) {
	fmt.Printf("call %s %s\n", c.Verb, c.Resource)
	return ctx, span("call")
}

type span string

func (s span) End(o trace.Outcome) { fmt.Printf("end %s, err %v\n", s, o.Err) }

// A Tracer set in manager.Options.Tracer is told of each event, each
// reconcile and each client call under it. Here the calls are made by
// hand, in the order the controller makes them.
func ExampleTracer() {
	var t trace.Tracer = logTracer{}
	link := t.Event(trace.Event{Type: trace.EventUpdate, Kind: "ConfigMap", Namespace: "shop", Name: "cart"})
	ctx, rs := t.StartReconcile(context.Background(), trace.Reconcile{
		Controller: "configmap", Namespace: "shop", Name: "cart",
		Links: []trace.Event{{Type: trace.EventUpdate, Link: link}},
	})
	_, cs := trace.FromContext(trace.NewContext(ctx, t)).StartCall(ctx, trace.Call{Verb: "update", Resource: "configmaps"})
	cs.End(trace.Outcome{StatusCode: 200})
	rs.End(trace.Outcome{})
	// Output:
	// event update ConfigMap shop/cart
	// reconcile configmap shop/cart, caused by 1 event(s)
	// call update configmaps
	// end call, err <nil>
	// end reconcile, err <nil>
}

// FromContext returns the Tracer NewContext put in a context, or nil: the
// client traces its requests only under a context that holds one.
func ExampleFromContext() {
	ctx := context.Background()
	fmt.Println(trace.FromContext(ctx) == nil)
	fmt.Println(trace.FromContext(trace.NewContext(ctx, logTracer{})) != nil)
	// Output:
	// true
	// true
}
