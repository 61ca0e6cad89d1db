package manager_test

import (
	"context"
	"fmt"
	"os"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/manager/signals"
)

// A manager that survives the loss of its lease: its controllers stop,
// its caches stay warm, and it campaigns again; Start returns only on a
// signal or a failure. Every leader-only runnable is started again each
// term, so one added by hand sets up its per-term state inside Start.
func ExampleOptions_leaderElectionRecampaign() {
	var cfg *rest.Config // from client/config, or rest.InClusterConfig()
	mgr, err := manager.New(cfg, manager.Options{
		LeaderElection:           true,
		LeaderElectionID:         "widgets-operator",
		LeaderElectionNamespace:  "operators",
		LeaderElectionRecampaign: true,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// ... builder.ControllerManagedBy(mgr).For(...).Complete(...): controllers restart on their own.

	// A leader-only runnable of one's own: Start runs once per term.
	_ = mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		ticks := make(chan struct{}) // per-term state, made afresh each term
		_ = ticks
		<-ctx.Done() // the term ended (lease lost) or the manager stops
		return nil
	}))

	if err := mgr.Start(signals.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, err) // a failure, or leader-only work that did not stop in time
		os.Exit(1)
	}
}
