package sharding

import (
	"fmt"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding/internal/gate"
)

// Reconciler wraps inner, the reconciler of the sharded kind of obj (a
// prototype from Options.Objects), with the shard's gate:
//   - it calls inner only while this shard holds a valid Lease and Start
//     is not stopping; otherwise it requeues after RetryPeriod (a request
//     that comes while the shard is still acquiring its first Lease waits
//     for it up to RetryPeriod before that). inner's
//     context ends when the Lease is lost, released or about to lapse;
//   - inner's context is fenced by the shard's hold of this term
//     (client.WithFence): every write through the live client, the
//     manager's client included, with that context or one derived from
//     it is refused with an error wrapping ErrLeaseLost once the hold is
//     no longer valid by the local monotonic clock, even if the
//     reconcile did not notice its context end (a stopped process), and
//     each admitted request is bounded by the time the hold remains. A
//     later term, after a rejoin, does not lift the fence of a reconcile
//     admitted in an earlier one. The handover's patch is fenced too;
//   - a request for an object that carries this ring's drain label is not
//     passed to inner: the gate acknowledges the drain by removing the
//     shard and drain labels (only if the object is still this shard's),
//     which hands the object to its new shard. The workqueue never runs
//     two reconciles of one key at once, so the reconcile in flight when
//     the drain was requested has finished by then;
//   - the NotFound that follows a handover (the object left this shard's
//     cache) is not passed to inner either, so that inner does not take a
//     move for a deletion;
//   - after a rejoin (the shard lost its Lease and holds it again), the
//     first request of each key is confirmed with a live metadata read:
//     an object the sharder moved to another shard while this one was out
//     is dropped whether the cache still holds it or answers NotFound (a
//     move, not a deletion), a draining one is handed over, a deleted one
//     is passed on only once the cache says NotFound too.
//
// It fails when obj's kind is not one of Options.Objects. It is
// idempotent: given a reconciler it returned for the same kind, it
// returns that reconciler, not a second gate around it (the builder gates
// the reconcilers of sharded kinds itself, see the manager's
// ShardReconciler, so a reconciler wrapped by hand is handed to it again).
func (r *Ring) Reconciler(obj client.Object, inner reconcile.Reconciler) (reconcile.Reconciler, error) {
	gvk, err := r.spec.C.GroupVersionKindFor(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: ring %q: %T: %w", ErrNotInScheme, r.spec.Ring, obj, err)
	}
	k, ok := r.spec.KindOf(gvk.GroupKind())
	if !ok || k.Controlled {
		return nil, fmt.Errorf("%w: ring %q: %s is not one of Options.Objects", ErrInvalidOptions, r.spec.Ring, gvk.Kind)
	}
	if inner == nil {
		return nil, fmt.Errorf("%w: ring %q: nil reconciler for %s", ErrInvalidOptions, r.spec.Ring, gvk.Kind)
	}
	if g, ok := inner.(*gate.Reconciler); ok {
		if !g.Gates(r.gate, k.GVK.GroupKind()) {
			return nil, fmt.Errorf("%w: ring %q: the reconciler for %s is already gated for %s by ring %q",
				ErrInvalidOptions, r.spec.Ring, gvk.Kind, g.Kind(), g.Ring())
		}
		return g, nil
	}
	return r.gate.Reconciler(k, inner), nil
}

// Sharded reports whether obj's kind is one of this ring's kinds
// (Options.Objects or Options.Controlled); false when it is not in the
// scheme.
func (r *Ring) Sharded(obj client.Object) bool {
	gvk, err := r.spec.C.GroupVersionKindFor(obj)
	if err != nil {
		return false
	}
	_, ok := r.spec.KindOf(gvk.GroupKind())
	return ok
}
