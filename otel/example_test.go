package otel_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/go-logr/logr/funcr"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/otel"
	"github.com/kubeloop/kubeloop/reconcile"
)

// A controller traced through OpenTelemetry: an event reaches it, its
// reconcile reads through a live client, and the SDK's in-memory recorder
// holds the event's span, the reconcile's span linked to it, and the
// client's span inside the reconcile. A manager takes the Tracer in
// manager.Options.Tracer instead.
func Example() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tracer := otel.New(tp)

	// A stand-in for the API server, answering the reconciler's Get.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default","name":"web","resourceVersion":"42"}}`)
	}))
	defer api.Close()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	live, err := client.New(&rest.Config{Host: api.URL}, client.Options{Mapper: mapper})
	if err != nil {
		panic(err)
	}

	reconciled := make(chan struct{})
	c, err := controller.NewUnmanaged("web", controller.Options{
		Tracer: tracer,
		Logger: funcr.New(func(string, string) {}, funcr.Options{}),
		Reconciler: reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			defer close(reconciled)
			var cm corev1.ConfigMap
			return reconcile.Result{}, live.Get(ctx, req.NamespacedName, &cm) // a child span
		}),
	})
	if err != nil {
		panic(err)
	}
	events := make(chan handler.GenericEvent, 1)
	if err := c.Watch(source.Channel(events, &handler.EnqueueRequestForObject{})); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- c.Start(ctx) }()
	events <- handler.GenericEvent{Object: &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", ResourceVersion: "41"}}}
	<-reconciled
	cancel()
	if err := <-stopped; err != nil {
		panic(err)
	}

	names := map[string]string{} // span ID -> name
	for _, s := range spans.Ended() {
		names[s.SpanContext().SpanID().String()] = s.Name()
	}
	for _, s := range spans.Ended() {
		line := fmt.Sprintf("%s (%s)", s.Name(), s.SpanKind())
		if p := s.Parent(); p.IsValid() {
			line += ", child of " + names[p.SpanID().String()]
		}
		for _, l := range s.Links() {
			var rv string
			for _, a := range l.Attributes {
				if a.Key == "kubeloop.object.resource_version" {
					rv = a.Value.AsString()
				}
			}
			line += fmt.Sprintf(", linked to %s (resourceVersion %s)", names[l.SpanContext.SpanID().String()], rv)
		}
		for _, a := range s.Attributes() {
			if a.Key == "http.response.status_code" || a.Key == "kubeloop.controller" {
				line += fmt.Sprintf(", %s=%s", a.Key, a.Value.Emit())
			}
		}
		fmt.Println(strings.TrimSpace(line))
	}
	// Output:
	// ConfigMap generic (consumer)
	// get configmaps (client), child of reconcile web, http.response.status_code=200
	// reconcile web (internal), linked to ConfigMap generic (resourceVersion 41), kubeloop.controller=web
}
