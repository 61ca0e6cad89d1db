// Command janitor runs the TTL janitor against the cluster of the current
// kubeconfig (or in-cluster config). Run two or more replicas: leader
// election makes exactly one of them delete.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kubeloop/kubeloop/client/config"
	"github.com/kubeloop/kubeloop/examples/janitor"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/manager/signals"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "path of a kubeconfig; empty: $KUBECONFIG, in-cluster, then ~/.kube/config")
	namespace := flag.String("leader-election-namespace", "default", "namespace of the ttl-janitor Lease")
	probes := flag.String("health-probe-bind-address", ":8081", "address of /healthz and /readyz; 0 disables them")
	flag.Parse()

	cfg, err := config.Load(*kubeconfig)
	if err == nil {
		var mgr *manager.Manager
		mgr, err = manager.New(cfg, manager.Options{
			LeaderElection:                true,
			LeaderElectionID:              "ttl-janitor",
			LeaderElectionNamespace:       *namespace,
			LeaderElectionReleaseOnCancel: true,
			HealthProbeBindAddress:        *probes,
		})
		if err == nil {
			if err = janitor.SetupWithManager(mgr, &janitor.Reconciler{}); err == nil {
				err = mgr.Start(signals.SetupSignalHandler())
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "janitor:", err)
		os.Exit(1)
	}
}
