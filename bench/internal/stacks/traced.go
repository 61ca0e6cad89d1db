package stacks

import (
	"context"
	"log/slog"

	"github.com/go-logr/logr"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/internal/probe"
	"github.com/kubeloop/kubeloop/manager"
	kubeotel "github.com/kubeloop/kubeloop/otel"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/trace"
)

// Traced are the kubeloop stack with tracing on, for the cost per event of
// tracing (bench/e2e -traced): not peers, not in Names.
//
//   - kubeloop-hook: manager.Options.Tracer is a Tracer that does nothing;
//     what is measured is kubeloop's side of the hook (the per-event queue,
//     the side table of links, the reconcile's context).
//   - kubeloop-otel: the OpenTelemetry adapter on the SDK, every span
//     sampled, batched to an exporter that drops them: an event span and a
//     reconcile span linked to it per event (the reconciler reads from the
//     cache, so there is no client span).
var Traced = map[string]Stack{
	"kubeloop-hook": func(ctx context.Context, cfg *rest.Config, workers int, observe Observe) error {
		return tracedKubeloop(ctx, cfg, workers, observe, nopTracer{})
	},
	"kubeloop-otel": func(ctx context.Context, cfg *rest.Config, workers int, observe Observe) error {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(dropExporter{}))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		return tracedKubeloop(ctx, cfg, workers, observe, kubeotel.New(tp))
	},
}

// tracedKubeloop is the kubeloop stack (manager + builder, defaults:
// cached client with deep copies) with tr as the manager's Tracer; nil is
// Stacks["kubeloop"].
func tracedKubeloop(ctx context.Context, cfg *rest.Config, workers int, observe Observe, tr trace.Tracer) error {
	mgr, err := manager.New(cfg, manager.Options{Logger: logr.FromSlogHandler(slog.DiscardHandler), Tracer: tr})
	if err != nil {
		return err
	}
	c := mgr.GetClient()
	err = builder.ControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			probe.Mark(probe.Reconcile)
			var cm corev1.ConfigMap
			if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
				return reconcile.Result{}, err
			}
			probe.Mark(probe.Observed)
			observe(&cm)
			return reconcile.Result{}, nil
		}))
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// nopTracer is a trace.Tracer that does nothing.
type nopTracer struct{}

func (nopTracer) Event(trace.Event) any { return nil }
func (nopTracer) StartReconcile(ctx context.Context, _ trace.Reconcile) (context.Context, trace.Span) {
	return ctx, nopSpan{}
}
func (nopTracer) StartCall(ctx context.Context, _ trace.Call) (context.Context, trace.Span) {
	return ctx, nopSpan{}
}

type nopSpan struct{}

func (nopSpan) End(trace.Outcome) {}

// dropExporter is an OpenTelemetry span exporter that drops every span.
type dropExporter struct{}

func (dropExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (dropExporter) Shutdown(context.Context) error                             { return nil }
