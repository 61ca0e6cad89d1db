package clusterprofile_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/multicluster/providers/clusterprofile"
)

// A ClusterProfile whose status offers an access provider this operator
// has credentials for engages the cluster "<namespace>/<name>": the
// endpoint and CA come from the profile, the credentials from the
// operator (here a function; an exec plugin works the same way). The
// example's hub has a minimal ClusterProfile CRD.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, _ := client.New(restConfig, client.Options{})
	_ = c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "example-inventory"}})

	p, err := clusterprofile.New(restConfig, clusterprofile.Options{
		Namespace: "example-inventory",
		AccessProviders: []clusterprofile.AccessProvider{{
			Name: "token",
			Credentials: func(_ context.Context, profile *unstructured.Unstructured, cfg *rest.Config) error {
				cfg.BearerToken = "token-for-" + profile.GetName() // from a vault, a cloud API, ...
				return nil
			},
		}},
	})
	if err != nil {
		panic(err)
	}
	engaged := make(chan string, 1)
	sink := multicluster.SinkFunc(func(_ context.Context, name string, cfg *rest.Config) error {
		engaged <- fmt.Sprintf("%s at %s with %s", name, cfg.Host, cfg.BearerToken)
		return nil
	})
	done := make(chan error)
	go func() { done <- p.Run(ctx, sink) }()

	_ = c.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ClusterProfile",
		"metadata": map[string]any{"namespace": "example-inventory", "name": "eu-1"},
		"spec":     map[string]any{"clusterManager": map[string]any{"name": "fleet-manager"}},
		"status": map[string]any{"accessProviders": []any{map[string]any{
			"name": "token", "cluster": map[string]any{"server": "https://eu-1.example:6443"},
		}}},
	}})
	fmt.Println(<-engaged)
	cancel()
	fmt.Println("Run returned", <-done)
	// Output:
	// example-inventory/eu-1 at https://eu-1.example:6443 with token-for-eu-1
	// Run returned <nil>
}
