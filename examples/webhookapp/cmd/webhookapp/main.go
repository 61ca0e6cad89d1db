// Command webhookapp serves the App webhooks without a manager:
//
//	webhookapp -cert-dir /var/run/webhook-certs -port 9443
//
// The directory holds tls.crt and tls.key; a rotated pair is picked up
// without a restart. SIGINT or SIGTERM stops it gracefully.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/examples/webhookapp"
	"github.com/kubeloop/kubeloop/webhook"
)

// server is the smallest webhook.Manager: a scheme and a server.
type server struct {
	scheme *runtime.Scheme
	srv    *webhook.Server
}

func (s server) GetScheme() *runtime.Scheme        { return s.scheme }
func (s server) GetWebhookServer() *webhook.Server { return s.srv }

func main() {
	certDir := flag.String("cert-dir", "", "directory with tls.crt and tls.key (default: the webhook package's)")
	port := flag.Int("port", webhook.DefaultPort, "port to serve on")
	flag.Parse()
	if err := run(*certDir, *port); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(certDir string, port int) error {
	scheme := runtime.NewScheme()
	if err := webhookapp.AddToScheme(scheme); err != nil {
		return err
	}
	s := server{scheme: scheme, srv: webhook.NewServer(webhook.Options{CertDir: certDir, Port: port})}
	if err := webhookapp.Setup(s); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return s.srv.Start(ctx)
}
