package manager

import (
	"context"
	"fmt"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/reconcile"
)

// clusters are the manager's clusters: its own, and the fleet of
// Options.Clusters.
type clusters struct {
	local   *multicluster.Cluster
	fleet   *multicluster.Fleet   // nil without Options.Clusters
	sharded *multicluster.Sharded // nil unless Options.Sharding is set too
}

var _ controller.FleetManager = (*Manager)(nil)

// newClusters describes the manager's own cluster and, with
// Options.Clusters, builds the fleet: it runs on every replica, its
// readiness check is "clusters", and its metrics are on the manager's
// registry. Without Options.Sharding every replica engages every cluster
// (their caches stay warm); with it, the clusters are placed on the
// ring's shards (multicluster.Sharded) and each replica engages its own.
func (m *Manager) newClusters() error {
	local, err := multicluster.NewCluster("", multicluster.Parts{Config: m.cfg, HTTPClient: m.httpClient,
		Scheme: m.scheme, Mapper: m.mapper, Cache: m.cache, Client: m.client})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	m.clusters.local = local
	if m.opts.Clusters == nil {
		return nil
	}
	co := m.opts.Cache
	co.Mapper, co.HTTPClient = nil, nil // each cluster has its own
	clo := m.opts.Client
	clo.Mapper, clo.HTTPClient = nil, nil
	provider := m.opts.Clusters
	if m.ring != nil {
		sh, err := multicluster.NewSharded(provider, m.ring, multicluster.ShardedOptions{Logger: m.logger, Metrics: m.Metrics()})
		if err != nil {
			return fmt.Errorf("manager: %w", err)
		}
		m.clusters.sharded, provider = sh, sh
	}
	f, err := multicluster.NewFleet(multicluster.Options{Provider: provider, Scheme: m.scheme,
		Cache: co, Client: clo, Local: local, Logger: m.logger, Metrics: m.Metrics()})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	if err := m.readyz.AddCheck("clusters", f.ReadyCheck); err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	if err := m.Add(f); err != nil {
		return fmt.Errorf("manager: add the fleet: %w", err)
	}
	m.clusters.fleet = f
	return nil
}

// GetCluster returns the cluster name: "" is the manager's own cluster
// (its client, cache and mapper), any other name an engaged cluster of
// Options.Clusters. In Reconcile, GetCluster(ctx, req.Cluster) gives the
// cluster whose GetClient() reads and writes the Request's object. A name
// that is not engaged (it left, or never joined) gives an error wrapping
// multicluster.ErrClusterNotFound.
func (m *Manager) GetCluster(ctx context.Context, name string) (*multicluster.Cluster, error) {
	if name == "" {
		return m.clusters.local, nil
	}
	if m.clusters.fleet == nil {
		return nil, fmt.Errorf("%w: %q: the manager has no Options.Clusters", multicluster.ErrClusterNotFound, name)
	}
	return m.clusters.fleet.GetCluster(ctx, name)
}

// GetFleet returns the fleet of Options.Clusters (to index every cluster
// with IndexField, or list the engaged clusters), or nil without one.
func (m *Manager) GetFleet() *multicluster.Fleet { return m.clusters.fleet }

// EngageFleet registers c with the fleet, which engages it with every
// cluster present and future (controller.FleetManager; the builder calls
// it for a controller with OnFleet or OnClusters watches). It fails
// without Options.Clusters.
func (m *Manager) EngageFleet(c *controller.Controller) error {
	if m.clusters.fleet == nil {
		return fmt.Errorf("manager: controller %q watches a fleet, but the manager has no Options.Clusters", c.ControllerName())
	}
	return m.clusters.fleet.AddController(c)
}

var _ builder.ShardedFleetManager = (*Manager)(nil)

// ShardFleetReconciler implements builder.ShardedFleetManager: when both
// Options.Sharding and Options.Clusters are set, it returns r behind the
// placement's gate (multicluster.Sharded.Reconciler: only the clusters
// this replica holds, under its shard's hold, fenced) and true, and the
// builder runs the controller on every replica.
func (m *Manager) ShardFleetReconciler(r reconcile.Reconciler) (reconcile.Reconciler, bool, error) {
	if m.clusters.sharded == nil {
		return r, false, nil
	}
	gated, err := m.clusters.sharded.Reconciler(r)
	if err != nil {
		return nil, true, fmt.Errorf("manager: %w", err)
	}
	return gated, true, nil
}

// GetShardedFleet returns the placement of the fleet's clusters on the
// ring's shards, or nil unless both Options.Sharding and Options.Clusters
// are set.
func (m *Manager) GetShardedFleet() *multicluster.Sharded { return m.clusters.sharded }
