package manager

import (
	"context"
	"fmt"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding"
)

// shardingEnabled reports whether Options.Sharding asks for a ring.
func (o Options) shardingEnabled() bool {
	return o.Sharding.Ring != "" || len(o.Sharding.Objects) > 0
}

// newRing builds the ring of Options.Sharding and narrows the cache
// options of its kinds to this shard. It runs before the cache is built.
// A zero Sharding.Namespace takes LeaderElectionNamespace, a zero Logger
// the manager's and zero Metrics the manager's registry. The ring's client
// can watch: the ring watches its Leases (see the sharding package doc).
func (m *Manager) newRing() error {
	if !m.opts.shardingEnabled() {
		return nil
	}
	live, err := client.NewWithWatch(m.cfg, client.Options{Scheme: m.scheme, Mapper: m.mapper, HTTPClient: m.httpClient})
	if err != nil {
		return fmt.Errorf("manager: sharding client: %w", err)
	}
	so := m.opts.Sharding
	if so.Namespace == "" {
		so.Namespace = m.opts.LeaderElectionNamespace
	}
	if so.Logger.GetSink() == nil {
		so.Logger = m.logger.WithName("sharding")
	}
	if so.Metrics == nil {
		so.Metrics = m.registry
	}
	if m.opts.Clusters != nil {
		so.Clusters = true // the ring places the fleet's clusters (clusters.go)
		if len(so.Objects) == 0 {
			so.Webhook.Disabled = true // no objects to assign
			m.opts.Sharding.Webhook.Disabled = true
		}
	}
	ring, err := sharding.New(live, so)
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	if err := ring.ConfigureCache(&m.opts.Cache); err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	m.ring = ring
	return nil
}

// startRing adds the ring as a runnable, its readiness check "shard" and
// its webhook on the manager's webhook server. It runs once the cache and
// clients exist.
func (m *Manager) startRing() error {
	if m.ring == nil {
		return nil
	}
	if err := m.Add(ringRunnable{ring: m.ring, reader: m.client}); err != nil {
		return err
	}
	if err := m.readyz.AddCheck("shard", m.ring.Checker); err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	// ServerSide mode assigns nothing: no webhook.
	if !m.opts.Sharding.Webhook.Disabled && m.opts.Sharding.Mode != sharding.ServerSide {
		srv := m.GetWebhookServer()
		if srv == nil {
			return fmt.Errorf("manager: sharding: no webhook server for ring %q", m.ring.Name())
		}
		srv.Register(sharding.Path(m.ring.Name()), m.ring.WebhookHandler())
	}
	return nil
}

// ringRunnable runs the ring with the manager's client as the reader of
// its gate (the cache ConfigureCache narrowed), on every replica.
type ringRunnable struct {
	ring   *sharding.Ring
	reader client.Reader
}

func (r ringRunnable) Start(ctx context.Context) error { return r.ring.Run(ctx, r.reader) }

func (ringRunnable) NeedLeaderElection() bool { return false }

// Sharding returns the manager's ring (Options.Sharding), or nil when the
// manager is not sharded. The builder gates the reconcilers of sharded
// kinds by itself (ShardReconciler); Ring.Reconciler is for controllers
// built without it.
func (m *Manager) Sharding() *sharding.Ring { return m.ring }

var _ builder.ShardedManager = (*Manager)(nil)

// ShardReconciler implements builder.ShardedManager: when the manager is
// sharded and obj's kind is one of the ring's, it returns r behind the
// ring's gate (Ring.Reconciler, which does not gate a gated reconciler
// twice) and true, and the builder runs the controller on every replica.
// A kind of Sharding.Controlled is an error: its objects move without a
// drain, so a controller must not reconcile them.
func (m *Manager) ShardReconciler(obj client.Object, r reconcile.Reconciler) (reconcile.Reconciler, bool, error) {
	if m.ring == nil || !m.ring.Sharded(obj) {
		return r, false, nil
	}
	gated, err := m.ring.Reconciler(obj, r)
	if err != nil {
		return nil, true, fmt.Errorf("manager: %w", err)
	}
	return gated, true, nil
}
