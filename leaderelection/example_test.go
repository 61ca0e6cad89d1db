package leaderelection_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/leaderelection"
)

// Outside a manager: campaign, lead while elected, stop leading before
// releasing the lease, and exit when the lease is lost.
func ExampleElector() {
	run := func(ctx context.Context, cfg *rest.Config, lead func(context.Context)) error {
		e, err := leaderelection.New(cfg, leaderelection.Options{
			ID:        "my-operator",
			Namespace: "operators",
		})
		if err != nil {
			return err
		}
		leadCtx, stopLeading := context.WithCancel(ctx)
		defer stopLeading()
		done := make(chan struct{})
		go func() {
			defer close(done)
			select {
			case <-e.Elected():
				lead(leadCtx)
			case <-leadCtx.Done():
			}
		}()
		// Run returns when ctx ends or as soon as the lease is lost.
		err = e.Run(ctx)
		stopLeading()
		<-done
		if err == nil {
			// The leader-only work has stopped: hand the lease over now
			// rather than after LeaseDuration.
			e.Release(context.Background())
		}
		return err
	}
	_ = run
	fmt.Println("ok")
	// Output: ok
}
