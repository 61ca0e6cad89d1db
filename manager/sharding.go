package manager

import (
	"fmt"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/sharding"
)

// shardingEnabled reports whether Options.Sharding asks for a ring.
func (o Options) shardingEnabled() bool {
	return o.Sharding.Ring != "" || len(o.Sharding.Objects) > 0
}

// newRing builds the ring of Options.Sharding and narrows the cache
// options of its kinds to this shard. It runs before the cache is built.
// A zero Sharding.Namespace takes LeaderElectionNamespace, a zero Logger
// the manager's and zero Metrics the manager's registry.
func (m *Manager) newRing() error {
	if !m.opts.shardingEnabled() {
		return nil
	}
	live, err := client.New(m.cfg, client.Options{Scheme: m.scheme, Mapper: m.mapper, HTTPClient: m.httpClient})
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
	m.ring.SetCacheReader(m.client)
	if err := m.Add(m.ring); err != nil {
		return err
	}
	if err := m.readyz.AddCheck("shard", m.ring.Checker); err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	if !m.opts.Sharding.Webhook.Disabled {
		srv := m.GetWebhookServer()
		if srv == nil {
			return fmt.Errorf("manager: sharding: no webhook server for ring %q", m.ring.Name())
		}
		srv.Register(sharding.Path(m.ring.Name()), m.ring.WebhookHandler())
	}
	return nil
}

// Sharding returns the manager's ring (Options.Sharding), or nil when the
// manager is not sharded. Wrap the reconcilers of sharded kinds with its
// Reconciler.
func (m *Manager) Sharding() *sharding.Ring { return m.ring }
