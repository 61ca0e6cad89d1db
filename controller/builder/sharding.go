package builder

import (
	"fmt"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/reconcile"
)

// ShardedManager is an optional interface of the manager given to
// ControllerManagedBy: a manager whose replicas split the objects of some
// kinds among themselves (kubeloop's manager.Manager with
// Options.Sharding implements it). When the kind of For is one of them,
// Complete and Build hand the reconciler to ShardReconciler, so that For,
// Owns and Watches of sharded kinds work unchanged:
//   - the controller reconciles through the returned reconciler (the
//     shard's gate, which admits only this shard's objects while its Lease
//     is valid and acknowledges drains);
//   - the controller runs on every replica, not only on the leader: a
//     NeedLeaderElection left nil becomes false, and an explicit true is
//     reported as a mistake, since the objects of the other shards would
//     then never be reconciled or handed over.
//
// The builder discovers the interface by a type assertion on the manager;
// a manager without it, or one that answers sharded false, builds the
// controller as it always did.
type ShardedManager interface {
	// ShardReconciler returns r gated for the objects of obj's kind and
	// true when that kind is sharded; r itself and false when it is not.
	// It must be idempotent: a reconciler it returned, given back, is
	// returned as is, not gated twice. It fails when obj's kind is
	// sharded in a way a controller cannot reconcile (a child kind, say).
	ShardReconciler(obj client.Object, r reconcile.Reconciler) (gated reconcile.Reconciler, sharded bool, err error)
}

// ShardedFleetManager is an optional interface of the manager given to
// ControllerManagedBy: a manager whose replicas split the clusters of its
// fleet among themselves (kubeloop's manager.Manager with both
// Options.Sharding and Options.Clusters). For a controller with OnFleet or
// OnClusters watches, Complete and Build hand the reconciler to
// ShardFleetReconciler and, when it answers sharded, run the controller on
// every replica, as for a sharded For kind (see ShardedManager).
type ShardedFleetManager interface {
	// ShardFleetReconciler returns r gated for the clusters this replica
	// holds and true when the fleet is sharded; r itself and false when
	// it is not. It must be idempotent.
	ShardFleetReconciler(r reconcile.Reconciler) (gated reconcile.Reconciler, sharded bool, err error)
}

// shard gates opts.Reconciler and makes the controller run on every
// replica when the manager shards the kind of For, or the fleet the
// controller watches. Build calls it after validate, with opts.Reconciler
// set.
func (b *TypedBuilder[request]) shard(name string, opts *controller.Options) error {
	gated, sharded, err := b.shardFleet(name, opts.Reconciler)
	if err != nil {
		return err
	}
	if sharded {
		if opts.NeedLeaderElection != nil && *opts.NeedLeaderElection {
			return fmt.Errorf("builder: controller %q watches the sharded fleet, so it runs on every replica; "+
				"Options.NeedLeaderElection true would leave the clusters of every replica but the leader's unreconciled (leave it nil)", name)
		}
		runEverywhere := false
		opts.NeedLeaderElection = &runEverywhere
		opts.Reconciler = gated
		return nil
	}
	sm, ok := b.mgr.(ShardedManager)
	if !ok || b.forInput == nil {
		return nil
	}
	gated, sharded, err = sm.ShardReconciler(b.forInput.obj, opts.Reconciler)
	if err != nil {
		return fmt.Errorf("builder: controller %q: For(%T): %w", name, b.forInput.obj, err)
	}
	if !sharded {
		return nil
	}
	if opts.NeedLeaderElection != nil && *opts.NeedLeaderElection {
		return fmt.Errorf("builder: controller %q: For(%T) is a sharded kind, so the controller runs on every replica; "+
			"Options.NeedLeaderElection true would leave the objects of every shard but the leader's unreconciled (leave it nil)",
			name, b.forInput.obj)
	}
	runEverywhere := false
	opts.NeedLeaderElection = &runEverywhere
	opts.Reconciler = gated
	return nil
}

// shardFleet gates r when the controller watches the fleet and the
// manager shards it. A sharded For kind cannot be reconciled so as well:
// its objects are split by the ring's labels, the fleet's clusters by
// their names.
func (b *TypedBuilder[request]) shardFleet(name string, r reconcile.Reconciler) (reconcile.Reconciler, bool, error) {
	fm, ok := b.mgr.(ShardedFleetManager)
	if !ok || !b.usesFleet() {
		return r, false, nil
	}
	gated, sharded, err := fm.ShardFleetReconciler(r)
	if err != nil {
		return nil, true, fmt.Errorf("builder: controller %q: %w", name, err)
	}
	if !sharded {
		return r, false, nil
	}
	if sm, ok := b.mgr.(ShardedManager); ok && b.forInput != nil {
		if _, forSharded, _ := sm.ShardReconciler(b.forInput.obj, r); forSharded {
			return nil, true, fmt.Errorf("builder: controller %q: For(%T) is a sharded kind and the controller watches the sharded fleet; "+
				"split it into a controller for each", name, b.forInput.obj)
		}
	}
	return gated, true, nil
}
