// Command sharded runs one replica (one shard) of the sharded example
// operator. Run several: each takes its share of the ConfigMaps.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/kubeloop/kubeloop/examples/sharded"
	"github.com/kubeloop/kubeloop/manager/signals"
)

func main() {
	var o sharded.ReplicaOptions
	flag.StringVar(&o.Kubeconfig, "kubeconfig", "", "path of a kubeconfig; empty: $KUBECONFIG, in-cluster, then ~/.kube/config")
	flag.StringVar(&o.LeaseNamespace, "lease-namespace", "default", "namespace of the shard Leases")
	flag.StringVar(&o.Shard, "shard", "", "shard name; empty: host name and a random suffix")
	flag.StringVar(&o.CertDir, "cert-dir", "", "directory of the webhook's tls.crt and tls.key")
	flag.StringVar(&o.CAFile, "ca-file", "", "PEM of the CA that signed the webhook certificate (the caBundle)")
	flag.IntVar(&o.WebhookPort, "webhook-port", 9443, "webhook server port on 127.0.0.1")
	flag.StringVar(&o.MetricsAddr, "metrics-bind-address", "0", "metrics address; /cached answers the cached ConfigMaps")
	flag.StringVar(&o.ProbeAddr, "health-probe-bind-address", "0", "address of /healthz and /readyz")
	flag.StringVar(&o.Witness, "witness", "", "file to append reconcile starts and ends to")
	flag.DurationVar(&o.Work, "work", 5*time.Millisecond, "time each reconcile waits")
	flag.IntVar(&o.Workers, "workers", 1, "concurrent reconciles")
	flag.DurationVar(&o.LeaseDuration, "lease-duration", 4*time.Second, "shard lease duration")
	flag.DurationVar(&o.SweepInterval, "sweep-interval", 30*time.Second, "sweep interval")
	flag.Parse()
	if err := sharded.RunReplica(signals.SetupSignalHandler(), o); err != nil {
		fmt.Fprintln(os.Stderr, "sharded:", err)
		os.Exit(1)
	}
}
