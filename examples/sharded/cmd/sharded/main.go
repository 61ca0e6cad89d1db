// Command sharded runs one replica (one shard) of the sharded example
// operator. Run several: each takes its share of the ConfigMaps.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/config"
	"github.com/kubeloop/kubeloop/examples/sharded"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/manager/signals"
	"github.com/kubeloop/kubeloop/sharding"
	"github.com/kubeloop/kubeloop/webhook"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "path of a kubeconfig; empty: $KUBECONFIG, in-cluster, then ~/.kube/config")
	namespace := flag.String("lease-namespace", "default", "namespace of the shard Leases")
	shard := flag.String("shard", "", "shard name; empty: host name and a random suffix")
	certDir := flag.String("cert-dir", "", "directory of the webhook's tls.crt and tls.key")
	caFile := flag.String("ca-file", "", "PEM of the CA that signed the webhook certificate (the caBundle)")
	port := flag.Int("webhook-port", 9443, "webhook server port on 127.0.0.1")
	metricsAddr := flag.String("metrics-bind-address", "0", "metrics address; /cached answers the cached ConfigMaps")
	probes := flag.String("health-probe-bind-address", "0", "address of /healthz and /readyz")
	witness := flag.String("witness", "", "file to append reconcile starts and ends to")
	work := flag.Duration("work", 5*time.Millisecond, "time each reconcile waits")
	lease := flag.Duration("lease-duration", 4*time.Second, "shard lease duration")
	sweep := flag.Duration("sweep-interval", 30*time.Second, "sweep interval")
	flag.Parse()
	if err := run(*kubeconfig, *namespace, *shard, *certDir, *caFile, *port, *metricsAddr, *probes, *witness, *work, *lease, *sweep); err != nil {
		fmt.Fprintln(os.Stderr, "sharded:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, namespace, shard, certDir, caFile string, port int, metricsAddr, probes, witness string, work, lease, sweep time.Duration) error {
	cfg, err := config.Load(kubeconfig)
	if err != nil {
		return err
	}
	var ca []byte
	if caFile != "" {
		if ca, err = os.ReadFile(caFile); err != nil {
			return err
		}
	}
	var mgr *manager.Manager
	cached := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { sharded.CachedHandler(mgr).ServeHTTP(w, req) })
	mgr, err = manager.New(cfg, manager.Options{
		Metrics:                 manager.MetricsOptions{BindAddress: metricsAddr, ExtraHandlers: map[string]http.Handler{"/cached": cached}},
		HealthProbeBindAddress:  probes,
		WebhookServer:           webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: certDir}),
		GracefulShutdownTimeout: 20 * time.Second,
		// Leader election stays on, as in most operators (for their
		// controllers of kinds that are not sharded): the builder runs the
		// sharded controller on every replica regardless.
		LeaderElection:                true,
		LeaderElectionID:              "sharded-demo",
		LeaderElectionNamespace:       namespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 lease,
		RenewDeadline:                 lease * 2 / 3,
		RetryPeriod:                   lease / 5,
		Sharding: sharding.Options{
			Ring:          sharded.Ring,
			Objects:       []client.Object{&corev1.ConfigMap{}},
			Namespace:     namespace,
			Shard:         shard,
			LeaseDuration: lease,
			RenewDeadline: lease * 2 / 3,
			RetryPeriod:   lease / 5,
			SweepInterval: sweep,
			Webhook: sharding.WebhookOptions{
				URL:      "https://127.0.0.1:" + strconv.Itoa(port),
				CABundle: ca,
			},
		},
	})
	if err != nil {
		return err
	}
	r := &sharded.Reconciler{Client: mgr.GetClient(), Shard: mgr.Sharding().Shard(), Work: work}
	if witness != "" {
		f, err := sharded.OpenWitness(witness)
		if err != nil {
			return err
		}
		defer f.Close()
		r.SetWitness(f)
	}
	if err := sharded.SetupWithManager(mgr, r); err != nil {
		return err
	}
	return mgr.Start(signals.SetupSignalHandler())
}
