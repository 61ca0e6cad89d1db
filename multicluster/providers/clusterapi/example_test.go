package clusterapi_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/multicluster/providers/clusterapi"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/providertest"
)

// A provisioned cluster-api Cluster and its <name>-kubeconfig Secret
// engage the cluster "<namespace>/<name>". (The example's management
// cluster has a minimal Cluster CRD, and the kubeconfig points back at
// it; manager.Options.Clusters would normally run the provider.)
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, _ := client.New(restConfig, client.Options{})
	_ = c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "example-capi"}})

	p, err := clusterapi.New(restConfig, clusterapi.Options{Namespace: "example-capi"})
	if err != nil {
		panic(err)
	}
	engaged := make(chan string, 1)
	sink := multicluster.SinkFunc(func(_ context.Context, name string, _ *rest.Config) error {
		engaged <- name
		return nil
	})
	done := make(chan error)
	go func() { done <- p.Run(ctx, sink) }()

	_ = c.Create(ctx, newCluster("v1beta2", "example-capi", "eu-1", map[string]any{"phase": "Provisioned"}))
	data, _ := providertest.Kubeconfig(map[string]*rest.Config{"eu-1-admin@eu-1": restConfig}, "eu-1-admin@eu-1")
	_ = c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "example-capi", Name: "eu-1-kubeconfig",
			Labels: map[string]string{clusterapi.ClusterNameLabel: "eu-1"}},
		Data: map[string][]byte{clusterapi.KubeconfigDataKey: data},
	})
	fmt.Println("engaged", <-engaged)
	cancel()
	fmt.Println("Run returned", <-done)
	// Output:
	// engaged example-capi/eu-1
	// Run returned <nil>
}
