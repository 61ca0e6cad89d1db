package providertest

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/multicluster"
)

// Run runs p with s in the background and returns a function that
// cancels it and returns what Run returned.
func Run(p multicluster.Provider, s multicluster.Sink) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, s) }()
	return func() error {
		cancel()
		return <-done
	}
}

// Reach reads the "default" Namespace through cfg: proof that an engaged
// config really reaches its cluster.
func Reach(ctx context.Context, cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	var ns corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: "default"}, &ns); err != nil {
		return fmt.Errorf("get through %s: %w", cfg.Host, err)
	}
	return nil
}
