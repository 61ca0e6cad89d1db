// Command app runs the App operator against the cluster of the current
// kubeconfig (or in-cluster config), with leader election, metrics and
// health probes.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeloop/kubeloop/client/config"
	"github.com/kubeloop/kubeloop/examples/app"
	appv1 "github.com/kubeloop/kubeloop/examples/app/api/v1"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/manager/healthz"
	"github.com/kubeloop/kubeloop/manager/signals"
)

func main() {
	var (
		kubeconfig  = flag.String("kubeconfig", "", "path of a kubeconfig; empty: $KUBECONFIG, in-cluster, then ~/.kube/config")
		leaderElect = flag.Bool("leader-elect", false, "run the controller only while holding the app-operator Lease")
		namespace   = flag.String("leader-election-namespace", "default", "namespace of the Lease")
		metrics     = flag.String("metrics-bind-address", ":8080", "address of /metrics; 0 disables it")
		probes      = flag.String("health-probe-bind-address", ":8081", "address of /healthz and /readyz; 0 disables them")
	)
	flag.Parse()
	if err := run(*kubeconfig, *leaderElect, *namespace, *metrics, *probes); err != nil {
		fmt.Fprintln(os.Stderr, "app operator:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, leaderElect bool, namespace, metrics, probes string) error {
	cfg, err := config.Load(kubeconfig)
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := appv1.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                        scheme,
		LeaderElection:                leaderElect,
		LeaderElectionID:              "app-operator",
		LeaderElectionNamespace:       namespace,
		LeaderElectionReleaseOnCancel: true,
		Metrics:                       manager.MetricsOptions{BindAddress: metrics},
		HealthProbeBindAddress:        probes,
	})
	if err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := app.SetupWithManager(mgr); err != nil {
		return err
	}
	return mgr.Start(signals.SetupSignalHandler())
}
