package multicluster

import (
	"context"
	"errors"

	"github.com/kubeloop/kubeloop/reconcile"
)

// Reconciler wraps inner, the reconciler of a controller that watches the
// fleet, with the placement's gate:
//   - a Request is passed to inner only while this replica holds its
//     cluster (Request.Cluster; "" is the manager's own cluster, which one
//     replica holds too) in the shard's current term, and the shard's
//     ring admits work (sharding.Ring.Admit): its Lease is held and valid
//     and Start is not stopping. Start waits for the reconciles admitted
//     so before it releases the Lease;
//   - inner's context carries the fence of the shard's hold
//     (client.WithFence: writes through any client with it fail with an
//     error wrapping sharding.ErrLeaseLost once the hold is no longer
//     valid) and ends when the term ends or the cluster is drained; a
//     drain waits for inner to return;
//   - a Request of a cluster placed on this shard but not held yet (the
//     previous owner is draining), or one that comes while the ring does
//     not admit work, is requeued after RetryPeriod; one of a cluster
//     placed on another shard is dropped: that shard reconciles it, from
//     its own watches.
//
// The controller must run on every replica (the builder does that for a
// controller with OnFleet or OnClusters watches when the manager's fleet
// is sharded). Reconciler is idempotent: a reconciler it returned is
// returned as is.
func (s *Sharded) Reconciler(inner reconcile.Reconciler) (reconcile.Reconciler, error) {
	if inner == nil {
		return nil, errors.New("multicluster: Sharded.Reconciler: nil reconciler")
	}
	if g, ok := inner.(*shardGate); ok && g.s == s {
		return g, nil
	}
	return &shardGate{s: s, inner: inner}, nil
}

type shardGate struct {
	s     *Sharded
	inner reconcile.Reconciler
}

func (g *shardGate) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	s := g.s
	requeue := reconcile.Result{RequeueAfter: s.ring.RetryPeriod()}
	adm, ok := s.ring.Admit(ctx)
	if !ok {
		return requeue, nil
	}
	defer adm.Done()
	s.mu.Lock()
	h := s.held[req.Cluster]
	if h == nil || h.draining || h.term != adm.Term() {
		mine := s.placement[req.Cluster] == s.ring.Shard() && (h == nil || !h.draining)
		s.mu.Unlock()
		if mine {
			return requeue, nil
		}
		return reconcile.Result{}, nil
	}
	h.inflight.Add(1)
	s.mu.Unlock()
	defer h.inflight.Done()
	wctx, cancel := adm.Context(ctx)
	defer cancel()
	stop := context.AfterFunc(h.ctx, cancel)
	defer stop()
	return g.inner.Reconcile(wctx, req)
}
