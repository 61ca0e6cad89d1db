package sharded

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/config"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/sharding"
	"github.com/kubeloop/kubeloop/webhook"
)

// ReplicaOptions configures one replica (one shard) of the example
// operator. The zero value of every field but CertDir and CAFile is valid.
type ReplicaOptions struct {
	// Kubeconfig is the path of a kubeconfig. Zero: $KUBECONFIG,
	// in-cluster, then ~/.kube/config.
	Kubeconfig string
	// LeaseNamespace holds the shard and leader election Leases. Zero:
	// "default".
	LeaseNamespace string
	// Shard is the shard name. Zero: the host name and a random suffix.
	Shard string
	// CertDir holds the webhook server's tls.crt and tls.key; CAFile is
	// the PEM of the CA that signed them (the webhook's caBundle).
	CertDir, CAFile string
	// WebhookPort is the webhook server's port on 127.0.0.1. Zero: 9443.
	WebhookPort int
	// MetricsAddr is the metrics address, which also serves /cached (the
	// number of cached ConfigMaps). Zero: "0", no server.
	MetricsAddr string
	// ProbeAddr is the address of /healthz and /readyz. Zero: none.
	ProbeAddr string
	// Witness is a file to append reconcile starts and ends to. Zero:
	// none.
	Witness string
	// Work is how long each reconcile waits. Zero: none.
	Work time.Duration
	// Workers is the number of concurrent reconciles. Zero: 1.
	Workers int
	// PprofAddr serves net/http/pprof. Zero: none.
	PprofAddr string
	// LeaseDuration is the shard and leader Lease duration; the renew
	// deadline is 2/3 of it and the retry period 1/5. Zero: 4 s.
	LeaseDuration time.Duration
	// SweepInterval is the sharder's sweep interval. Zero: 30 s.
	SweepInterval time.Duration
}

// RunReplica runs one replica of the example operator until ctx ends: a
// manager sharded over the ring Ring (ConfigMaps, assigned by the
// webhook it serves at https://127.0.0.1:WebhookPort and by the sweep),
// with leader election on and the controller of SetupWithManager.
func RunReplica(ctx context.Context, o ReplicaOptions) error {
	if o.LeaseNamespace == "" {
		o.LeaseNamespace = "default"
	}
	if o.WebhookPort == 0 {
		o.WebhookPort = 9443
	}
	if o.MetricsAddr == "" {
		o.MetricsAddr = "0"
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = 4 * time.Second
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = 30 * time.Second
	}
	cfg, err := config.Load(o.Kubeconfig)
	if err != nil {
		return err
	}
	var ca []byte
	if o.CAFile != "" {
		if ca, err = os.ReadFile(o.CAFile); err != nil {
			return err
		}
	}
	var mgr *manager.Manager
	cached := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { CachedHandler(mgr).ServeHTTP(w, req) })
	lease := o.LeaseDuration
	mgr, err = manager.New(cfg, manager.Options{
		Metrics:                 manager.MetricsOptions{BindAddress: o.MetricsAddr, ExtraHandlers: map[string]http.Handler{"/cached": cached}},
		HealthProbeBindAddress:  o.ProbeAddr,
		PprofBindAddress:        o.PprofAddr,
		WebhookServer:           webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: o.WebhookPort, CertDir: o.CertDir}),
		GracefulShutdownTimeout: 20 * time.Second,
		// Leader election stays on, as in most operators (for their
		// controllers of kinds that are not sharded): the builder runs the
		// sharded controller on every replica regardless.
		LeaderElection:                true,
		LeaderElectionID:              "sharded-demo",
		LeaderElectionNamespace:       o.LeaseNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 lease,
		RenewDeadline:                 lease * 2 / 3,
		RetryPeriod:                   lease / 5,
		Sharding: sharding.Options{
			Ring:          Ring,
			Objects:       []client.Object{&corev1.ConfigMap{}},
			Namespace:     o.LeaseNamespace,
			Shard:         o.Shard,
			LeaseDuration: lease,
			RenewDeadline: lease * 2 / 3,
			RetryPeriod:   lease / 5,
			SweepInterval: o.SweepInterval,
			Webhook: sharding.WebhookOptions{
				URL:      "https://127.0.0.1:" + strconv.Itoa(o.WebhookPort),
				CABundle: ca,
			},
		},
	})
	if err != nil {
		return err
	}
	r := &Reconciler{Client: mgr.GetClient(), Shard: mgr.Sharding().Shard(), Work: o.Work, Workers: o.Workers}
	if o.Witness != "" {
		f, err := OpenWitness(o.Witness)
		if err != nil {
			return err
		}
		defer f.Close()
		r.SetWitness(f)
	}
	if err := SetupWithManager(mgr, r); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
