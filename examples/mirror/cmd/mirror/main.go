// Command mirror runs the ConfigMap mirror against the cluster of the
// current kubeconfig (or in-cluster config).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kubeloop/kubeloop/client/config"
	"github.com/kubeloop/kubeloop/examples/mirror"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/manager/signals"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "path of a kubeconfig; empty: $KUBECONFIG, in-cluster, then ~/.kube/config")
	flag.Parse()
	if err := run(*kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "mirror:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string) error {
	cfg, err := config.Load(kubeconfig)
	if err != nil {
		return err
	}
	mgr, err := manager.New(cfg, manager.Options{})
	if err != nil {
		return err
	}
	ctx := signals.SetupSignalHandler()
	if err := mirror.SetupWithManager(ctx, mgr); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
