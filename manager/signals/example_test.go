package signals_test

import (
	"context"
	"fmt"

	"github.com/kubeloop/kubeloop/manager/signals"
)

// A controller's main function stops its manager on SIGTERM (what the
// kubelet sends) or Ctrl-C.
func ExampleSetupSignalHandler() {
	ctx := signals.SetupSignalHandler()
	run := func(ctx context.Context) error { <-ctx.Done(); return nil } // mgr.Start
	if err := run(ctx); err != nil {
		fmt.Println(err)
	}
}
