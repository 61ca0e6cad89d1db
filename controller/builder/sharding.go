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

// shard gates opts.Reconciler and makes the controller run on every
// replica when the manager shards the kind of For. Build calls it after
// validate, with opts.Reconciler set.
func (b *TypedBuilder[request]) shard(name string, opts *controller.Options) error {
	sm, ok := b.mgr.(ShardedManager)
	if !ok || b.forInput == nil {
		return nil
	}
	gated, sharded, err := sm.ShardReconciler(b.forInput.obj, opts.Reconciler)
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
