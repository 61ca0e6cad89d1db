package webhook_test

import (
	"context"
	"fmt"
	"log"
	"os/signal"
	"syscall"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/webhook"
	"github.com/kubeloop/kubeloop/webhook/admission"
	"github.com/kubeloop/kubeloop/webhook/internal/testwidget"
)

// A server without a manager: register a kind's webhooks and serve until
// SIGTERM. (Not run: it listens on :9443.)
func ExampleNewServer() {
	scheme := runtime.NewScheme()
	_ = testwidget.AddToScheme(scheme)
	srv := webhook.NewServer(webhook.Options{CertDir: "/var/run/certs"})
	srv.Register(webhook.ValidatePath(testwidget.V1Kind), admission.WithValidator[*testwidget.V1](scheme, widgetValidator{}))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := srv.Start(ctx); err != nil {
		log.Fatal(err)
	}
}

// Paths follow controller-runtime's convention, so existing webhook
// configurations keep working.
func ExampleMutatePath() {
	fmt.Println(webhook.MutatePath(testwidget.V1Kind))
	fmt.Println(webhook.ValidatePath(testwidget.V1Kind))
	// Output:
	// /mutate-test-kubeloop-dev-v1-widget
	// /validate-test-kubeloop-dev-v1-widget
}
