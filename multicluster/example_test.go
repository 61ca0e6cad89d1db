package multicluster_test

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/multicluster"
)

// A Provider engages each cluster with a context that ends when the
// cluster leaves; the fleet is its Sink. This one engages nothing it
// cannot name and reports what the Sink says.
func ExampleProviderFunc() {
	provider := multicluster.ProviderFunc(func(ctx context.Context, s multicluster.Sink) error {
		for _, name := range []string{"eu-1", "", "us east"} {
			if err := s.Engage(ctx, name, &rest.Config{Host: "https://127.0.0.1:1"}); err != nil {
				fmt.Println(err)
				continue
			}
			fmt.Println("engaged", name)
		}
		return nil
	})
	sink := multicluster.SinkFunc(func(_ context.Context, name string, _ *rest.Config) error {
		return multicluster.ValidateName(name)
	})
	_ = provider.Run(context.Background(), sink)
	// Output:
	// engaged eu-1
	// multicluster: invalid cluster name: the empty name is the manager's own cluster
	// multicluster: invalid cluster name: "us east" holds whitespace or a control character
}

// GetCluster names what it does not have: a cluster that never joined or
// has left wraps ErrClusterNotFound, so a Reconcile can drop its Request.
func ExampleFleet_GetCluster() {
	fleet, err := multicluster.NewFleet(multicluster.Options{})
	if err != nil {
		panic(err)
	}
	_, err = fleet.GetCluster(context.Background(), "eu-1")
	fmt.Println(errors.Is(err, multicluster.ErrClusterNotFound), err)
	fmt.Println(fleet.Clusters())
	// Output:
	// true multicluster: cluster not found: "eu-1" is not engaged
	// []
}
