package manager_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/leaderelection"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/manager/healthz"
	"github.com/kubeloop/kubeloop/manager/signals"
)

// The main function of an operator: probes, metrics, leader election, and
// an exit status that tells the kubelet to restart a deposed leader.
func ExampleNew() {
	var cfg *rest.Config // from client/config, or rest.InClusterConfig()
	mgr, err := manager.New(cfg, manager.Options{
		LeaderElection:          true,
		LeaderElectionID:        "widgets-operator",
		LeaderElectionNamespace: "operators",
		HealthProbeBindAddress:  ":8081",
		Metrics:                 manager.MetricsOptions{BindAddress: ":8080"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = mgr.AddHealthzCheck("ping", healthz.Ping)
	// ... builder.ControllerManagedBy(mgr).For(...).Complete(...)

	if err := mgr.Start(signals.SetupSignalHandler()); err != nil {
		if errors.Is(err, leaderelection.ErrLeaderElectionLost) {
			fmt.Fprintln(os.Stderr, "lost the lease; restarting as a standby")
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// A RunnableFunc runs beside the controllers; this one needs no
// leadership, so it also runs on standby replicas.
func ExampleRunnableFunc() {
	warmer := manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done() // work until the manager stops
		return nil
	})
	var r manager.Runnable = standby{warmer}
	_, isLeaderOnly := r.(manager.LeaderElectionRunnable)
	fmt.Println(isLeaderOnly, r.(manager.LeaderElectionRunnable).NeedLeaderElection())
	// Output: true false
}

// standby marks a runnable as one that needs no leadership.
type standby struct{ manager.RunnableFunc }

func (standby) NeedLeaderElection() bool { return false }
