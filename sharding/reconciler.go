package sharding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/webhook/admission"
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
	gvk, err := r.c.GroupVersionKindFor(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: ring %q: %T: %w", ErrNotInScheme, r.opts.Ring, obj, err)
	}
	k, ok := r.kindOf(gvk.GroupKind())
	if !ok || k.controlled {
		return nil, fmt.Errorf("%w: ring %q: %s is not one of Options.Objects", ErrInvalidOptions, r.opts.Ring, gvk.Kind)
	}
	if inner == nil {
		return nil, fmt.Errorf("%w: ring %q: nil reconciler for %s", ErrInvalidOptions, r.opts.Ring, gvk.Kind)
	}
	if g, ok := inner.(*gate); ok {
		if g.r != r || g.k.gvk.GroupKind() != k.gvk.GroupKind() {
			return nil, fmt.Errorf("%w: ring %q: the reconciler for %s is already gated for %s by ring %q",
				ErrInvalidOptions, r.opts.Ring, gvk.Kind, g.k.gvk.Kind, g.r.opts.Ring)
		}
		return g, nil
	}
	return &gate{r: r, k: k, inner: inner}, nil
}

// Sharded reports whether obj's kind is one of this ring's kinds
// (Options.Objects or Options.Controlled); false when it is not in the
// scheme.
func (r *Ring) Sharded(obj client.Object) bool {
	gvk, err := r.c.GroupVersionKindFor(obj)
	if err != nil {
		return false
	}
	_, ok := r.kindOf(gvk.GroupKind())
	return ok
}

type gate struct {
	r     *Ring
	k     kind
	inner reconcile.Reconciler
}

func (g *gate) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r := g.r
	t := r.enter()
	if t == nil && r.awaitLease(ctx) {
		t = r.enter()
	}
	if t == nil {
		return reconcile.Result{RequeueAfter: r.opts.RetryPeriod}, nil
	}
	defer r.leave()
	if r.ss != nil {
		return g.serverSide(ctx, t, req)
	}

	cobj, reader, err := g.newTarget()
	if err != nil {
		return reconcile.Result{}, err
	}
	hkey := g.k.gvk.Kind + "/" + req.String()
	// Writes of the reconcile, and the handover, are fenced by this term's
	// hold: they fail with ErrLeaseLost once it is no longer valid.
	fenced := client.WithFence(ctx, t.holder)
	err = reader.Get(ctx, req.NamespacedName, cobj)
	switch {
	case apierrors.IsNotFound(err):
		r.mu.Lock()
		_, moved := r.handedOver[hkey]
		delete(r.handedOver, hkey)
		r.mu.Unlock()
		if moved {
			return reconcile.Result{}, nil
		}
		if t.rejoined {
			if res, pass, err := g.confirm(fenced, t, req, hkey, true); !pass {
				return res, err
			}
		}
	case err != nil:
		return reconcile.Result{}, err
	case cobj.GetLabels()[r.drainKey] != "":
		return g.handOver(fenced, cobj, hkey)
	default:
		// Here, not draining, after a handover: the object came back
		// (the acknowledging update was assigned to this shard again, by
		// a webhook whose view of the ring had changed since the drain
		// was requested). The cache never goes back to the draining copy
		// it handed over, so a later NotFound is a deletion.
		r.mu.Lock()
		delete(r.handedOver, hkey)
		_, confirmed := t.confirmed[hkey]
		r.mu.Unlock()
		if t.rejoined && !confirmed {
			if res, pass, err := g.confirm(fenced, t, req, hkey, false); !pass {
				return res, err
			}
		}
	}
	ictx, cancel := context.WithCancel(fenced)
	defer cancel()
	stop := context.AfterFunc(t.ctx, cancel)
	defer stop()
	return g.inner.Reconcile(ictx, req)
}

// confirm is the gate's check after a rejoin (term.rejoined): while this
// shard was out, the sharder may have moved its objects to other shards,
// and the cache, which may lag, still serves them, or has dropped them
// (the label selector no longer matches) and answers NotFound, which is a
// move, not a deletion. A live metadata read decides, once per key and
// term: it passes the request on (pass) when the object is assigned to
// this shard and not draining, or when it is gone from the API server and
// the cache said NotFound (a deletion). It hands a draining object over,
// drops the request of an object now on another shard, and requeues one
// that is this shard's but not in the cache yet.
func (g *gate) confirm(ctx context.Context, t *term, req reconcile.Request, hkey string, cacheNotFound bool) (reconcile.Result, bool, error) {
	r := g.r
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(g.k.gvk)
	err := r.c.Get(ctx, req.NamespacedName, m)
	switch {
	case apierrors.IsNotFound(err):
		// Deleted. With the cache still holding it, its deletion event
		// follows and brings the request again.
		return reconcile.Result{}, cacheNotFound, nil
	case err != nil:
		return reconcile.Result{}, false, fmt.Errorf("sharding: ring %q: confirm the shard of %s %s after a rejoin: %w", r.opts.Ring, g.k.gvk.Kind, req, err)
	}
	lbl := m.GetLabels()
	switch {
	case lbl[r.shardKey] != r.opts.Shard:
		r.log.V(1).Info("moved to another shard while this one was out", "kind", g.k.gvk.Kind, "object", req.String(), "to", lbl[r.shardKey])
		return reconcile.Result{}, false, nil
	case lbl[r.drainKey] != "":
		res, err := g.handOver(ctx, m, hkey)
		return res, false, err
	case cacheNotFound:
		return reconcile.Result{RequeueAfter: r.opts.RetryPeriod}, false, nil
	}
	r.mu.Lock()
	t.confirmed[hkey] = struct{}{}
	r.mu.Unlock()
	return reconcile.Result{}, true, nil
}

// handOver acknowledges a drain: a JSON patch that tests that the object
// is still this shard's and draining, and removes both labels.
func (g *gate) handOver(ctx context.Context, obj client.Object, hkey string) (reconcile.Result, error) {
	r := g.r
	lbl := obj.GetLabels()
	if lbl[r.shardKey] != r.opts.Shard {
		return reconcile.Result{}, nil // not ours (a stale read): nothing to hand over
	}
	ops := []admission.PatchOperation{
		{Op: "test", Path: "/metadata/labels/" + escapePointer(r.shardKey), Value: r.opts.Shard},
		{Op: "test", Path: "/metadata/labels/" + escapePointer(r.drainKey), Value: lbl[r.drainKey]},
		{Op: "remove", Path: "/metadata/labels/" + escapePointer(r.shardKey)},
		{Op: "remove", Path: "/metadata/labels/" + escapePointer(r.drainKey)},
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return reconcile.Result{}, err
	}
	r.mu.Lock()
	r.handedOver[hkey] = struct{}{}
	r.mu.Unlock()
	err = r.c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, data))
	switch {
	case err == nil:
	case apierrors.IsNotFound(err), rejectedPatch(err):
		// Deleted, or the test failed: the labels changed (already handed
		// over, or reassigned by the sharder). Not ours either way.
		return reconcile.Result{}, nil
	default:
		r.mu.Lock()
		delete(r.handedOver, hkey)
		r.mu.Unlock()
		return reconcile.Result{}, fmt.Errorf("sharding: ring %q: hand over %s %s: %w", r.opts.Ring, g.k.gvk.Kind, client.ObjectKeyFromObject(obj), err)
	}
	r.metrics.moves.WithLabelValues(r.opts.Ring, "handover").Inc()
	if ms, err := strconv.ParseInt(lbl[r.drainKey], 10, 64); err == nil {
		r.metrics.drain.WithLabelValues(r.opts.Ring).Observe(time.Since(time.UnixMilli(ms)).Seconds())
	}
	r.log.V(1).Info("handed over", "kind", g.k.gvk.Kind, "object", client.ObjectKeyFromObject(obj).String())
	return reconcile.Result{}, nil
}

// enter admits a reconcile when the shard holds its Lease, admits
// reconciles and is not stopping; it returns the current term, or nil.
func (r *Ring) enter() *term {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.accepting || r.cur == nil || !r.cur.holder.Valid(time.Now()) {
		return nil
	}
	r.inflight++
	return r.cur
}

// awaitLease waits, at most RetryPeriod, until the shard first holds
// its Lease, and reports whether it has. The caches sync and the
// controllers start while the shard acquires its Lease: without the wait
// every object of a starting replica would be requeued for RetryPeriod
// (BenchmarkShardedThroughput in bench/sharding showed 2 s of a 3.6 s
// cold start spent so). After the shard stopped it returns true at once,
// and enter refuses.
func (r *Ring) awaitLease(ctx context.Context) bool {
	t := time.NewTimer(r.opts.RetryPeriod)
	defer t.Stop()
	select {
	case <-r.admitting:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}

func (r *Ring) leave() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inflight--
	if r.inflight == 0 {
		r.idle.Broadcast()
	}
}

// rejectedPatch reports whether the API server rejected a JSON patch as
// invalid (422): a failed test operation.
func rejectedPatch(err error) bool {
	var st apierrors.APIStatus
	return apierrors.IsInvalid(err) || (errors.As(err, &st) && st.Status().Code == http.StatusUnprocessableEntity)
}
