package kubeconfig_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/providertest"
	"github.com/kubeloop/kubeloop/multicluster/providers/kubeconfig"
)

// A Secret labelled multicluster.kubeloop.dev/kubeconfig=true in the
// provider's namespace engages the cluster its kubeconfig points at,
// under the Secret's name; deleting it ends that cluster's context. (Here
// the kubeconfig points back at the example's own control plane, and
// manager.Options.Clusters would normally run the provider.)
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, _ := client.New(restConfig, client.Options{})
	_ = c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "example-fleet"}})

	p, err := kubeconfig.New(restConfig, kubeconfig.Options{Namespace: "example-fleet"})
	if err != nil {
		panic(err)
	}
	events := make(chan string)
	sink := multicluster.SinkFunc(func(cctx context.Context, name string, cfg *rest.Config) error {
		go func() { events <- "engaged " + name; <-cctx.Done(); events <- "left " + name }()
		return nil
	})
	done := make(chan error)
	go func() { done <- p.Run(ctx, sink) }()

	data, _ := providertest.Kubeconfig(map[string]*rest.Config{"admin": restConfig}, "admin")
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "example-fleet", Name: "eu-1", Labels: map[string]string{kubeconfig.DefaultLabel: "true"}},
		Data:       map[string][]byte{"kubeconfig": data},
	}
	_ = c.Create(ctx, s)
	fmt.Println(<-events)
	_ = c.Delete(ctx, s)
	fmt.Println(<-events)
	cancel()
	fmt.Println("Run returned", <-done)
	// Output:
	// engaged eu-1
	// left eu-1
	// Run returned <nil>
}
