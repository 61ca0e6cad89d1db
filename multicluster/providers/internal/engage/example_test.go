package engage_test

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/engage"
)

// A provider hands Sync what its source says now; Sync engages what is
// new, re-engages what changed and disengages what is gone.
func ExampleSet_Sync() {
	var previous context.Context
	sink := multicluster.SinkFunc(func(ctx context.Context, name string, cfg *rest.Config) error {
		if previous != nil {
			fmt.Println("previous engagement ended:", previous.Err() != nil)
		}
		previous = ctx
		fmt.Println("engage", name, cfg.Host)
		return nil
	})
	set := engage.NewSet(sink, logr.Discard())
	of := func(name, host string) engage.Target {
		return engage.Target{Name: name, Source: "example " + name, Key: engage.Hash([]byte(host)),
			Config: func() (*rest.Config, error) { return &rest.Config{Host: host}, nil }}
	}
	ctx := context.Background()
	set.Sync(ctx, []engage.Target{of("eu-1", "https://a")})
	set.Sync(ctx, []engage.Target{of("eu-1", "https://a")}) // unchanged: nothing
	set.Sync(ctx, []engage.Target{of("eu-1", "https://b")}) // changed: end, then engage
	fmt.Println("engaged:", set.Engaged())
	// Output:
	// engage eu-1 https://a
	// previous engagement ended: true
	// engage eu-1 https://b
	// engaged: [eu-1]
}
