package gate

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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
	"github.com/kubeloop/kubeloop/webhook/admission"
)

// Mode decides the reconciles of a term in place of the Labels mode's
// rules (ServerSide mode): it is called once the term admitted req.
type Mode interface {
	Reconcile(ctx context.Context, t *Term, k spec.Kind, req reconcile.Request, inner reconcile.Reconciler) (reconcile.Result, error)
}

// Reconciler is the gate around the reconciler of one sharded kind (see
// the public package's Ring.Reconciler for its rules).
type Reconciler struct {
	g     *Gate
	k     spec.Kind
	inner reconcile.Reconciler
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// Reconciler returns inner behind g for kind k.
func (g *Gate) Reconciler(k spec.Kind, inner reconcile.Reconciler) *Reconciler {
	return &Reconciler{g: g, k: k, inner: inner}
}

// Gates reports whether gr is g's gate for kind gk.
func (gr *Reconciler) Gates(g *Gate, gk schema.GroupKind) bool {
	return gr.g == g && gr.k.GVK.GroupKind() == gk
}

// Kind returns the kind gr gates.
func (gr *Reconciler) Kind() string { return gr.k.GVK.Kind }

// Ring returns the name of the ring of gr's gate.
func (gr *Reconciler) Ring() string { return gr.g.spec.Ring }

// Reconcile admits req under the current term, or requeues it after
// RetryPeriod.
func (gr *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	g, r := gr.g, gr.g.spec
	t := g.Enter(ctx)
	if t == nil {
		return reconcile.Result{RequeueAfter: r.RetryPeriod}, nil
	}
	defer g.Leave()
	if g.mode != nil {
		return g.mode.Reconcile(ctx, t, gr.k, req, gr.inner)
	}

	cobj, err := NewObject(r, gr.k)
	if err != nil {
		return reconcile.Result{}, err
	}
	hkey := gr.k.GVK.Kind + "/" + req.String()
	// Writes of the reconcile, and the handover, are fenced by this term's
	// hold: they fail with ErrLeaseLost once it is no longer valid.
	fenced := client.WithFence(ctx, t.Holder)
	err = t.Reader.Get(ctx, req.NamespacedName, cobj)
	switch {
	case apierrors.IsNotFound(err):
		g.mu.Lock()
		_, moved := g.handedOver[hkey]
		delete(g.handedOver, hkey)
		g.mu.Unlock()
		if moved {
			return reconcile.Result{}, nil
		}
		if t.Rejoined {
			if res, pass, err := gr.confirm(fenced, t, req, hkey, true); !pass {
				return res, err
			}
		}
	case err != nil:
		return reconcile.Result{}, err
	case cobj.GetLabels()[r.DrainKey] != "":
		return gr.handOver(fenced, cobj, hkey)
	default:
		// Here, not draining, after a handover: the object came back
		// (the acknowledging update was assigned to this shard again, by
		// a webhook whose view of the ring had changed since the drain
		// was requested). The cache never goes back to the draining copy
		// it handed over, so a later NotFound is a deletion.
		g.mu.Lock()
		delete(g.handedOver, hkey)
		_, confirmed := t.confirmed[hkey]
		g.mu.Unlock()
		if t.Rejoined && !confirmed {
			if res, pass, err := gr.confirm(fenced, t, req, hkey, false); !pass {
				return res, err
			}
		}
	}
	ictx, cancel := Fenced(ctx, t)
	defer cancel()
	return gr.inner.Reconcile(ictx, req)
}

// confirm is the gate's check after a rejoin (Term.Rejoined): while this
// shard was out, the sharder may have moved its objects to other shards,
// and the cache, which may lag, still serves them, or has dropped them
// (the label selector no longer matches) and answers NotFound, which is a
// move, not a deletion. A live metadata read decides, once per key and
// term: it passes the request on (pass) when the object is assigned to
// this shard and not draining, or when it is gone from the API server and
// the cache said NotFound (a deletion). It hands a draining object over,
// drops the request of an object now on another shard, and requeues one
// that is this shard's but not in the cache yet.
func (gr *Reconciler) confirm(ctx context.Context, t *Term, req reconcile.Request, hkey string, cacheNotFound bool) (reconcile.Result, bool, error) {
	g, r := gr.g, gr.g.spec
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gr.k.GVK)
	err := r.C.Get(ctx, req.NamespacedName, m)
	switch {
	case apierrors.IsNotFound(err):
		// Deleted. With the cache still holding it, its deletion event
		// follows and brings the request again.
		return reconcile.Result{}, cacheNotFound, nil
	case err != nil:
		return reconcile.Result{}, false, fmt.Errorf("sharding: ring %q: confirm the shard of %s %s after a rejoin: %w", r.Ring, gr.k.GVK.Kind, req, err)
	}
	lbl := m.GetLabels()
	switch {
	case lbl[r.ShardKey] != r.Shard:
		r.Log.V(1).Info("moved to another shard while this one was out", "kind", gr.k.GVK.Kind, "object", req.String(), "to", lbl[r.ShardKey])
		return reconcile.Result{}, false, nil
	case lbl[r.DrainKey] != "":
		res, err := gr.handOver(ctx, m, hkey)
		return res, false, err
	case cacheNotFound:
		return reconcile.Result{RequeueAfter: r.RetryPeriod}, false, nil
	}
	g.mu.Lock()
	t.confirmed[hkey] = struct{}{}
	g.mu.Unlock()
	return reconcile.Result{}, true, nil
}

// handOver acknowledges a drain: a JSON patch that tests that the object
// is still this shard's and draining, and removes both labels.
func (gr *Reconciler) handOver(ctx context.Context, obj client.Object, hkey string) (reconcile.Result, error) {
	g, r := gr.g, gr.g.spec
	lbl := obj.GetLabels()
	if lbl[r.ShardKey] != r.Shard {
		return reconcile.Result{}, nil // not ours (a stale read): nothing to hand over
	}
	ops := []admission.PatchOperation{
		{Op: "test", Path: "/metadata/labels/" + spec.EscapePointer(r.ShardKey), Value: r.Shard},
		{Op: "test", Path: "/metadata/labels/" + spec.EscapePointer(r.DrainKey), Value: lbl[r.DrainKey]},
		{Op: "remove", Path: "/metadata/labels/" + spec.EscapePointer(r.ShardKey)},
		{Op: "remove", Path: "/metadata/labels/" + spec.EscapePointer(r.DrainKey)},
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return reconcile.Result{}, err
	}
	g.mu.Lock()
	g.handedOver[hkey] = struct{}{}
	g.mu.Unlock()
	err = r.C.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, data))
	switch {
	case err == nil:
	case apierrors.IsNotFound(err), rejectedPatch(err):
		// Deleted, or the test failed: the labels changed (already handed
		// over, or reassigned by the sharder). Not ours either way.
		return reconcile.Result{}, nil
	default:
		g.mu.Lock()
		delete(g.handedOver, hkey)
		g.mu.Unlock()
		return reconcile.Result{}, fmt.Errorf("sharding: ring %q: hand over %s %s: %w", r.Ring, gr.k.GVK.Kind, client.ObjectKeyFromObject(obj), err)
	}
	r.Metrics.Moves.WithLabelValues(r.Ring, "handover").Inc()
	if ms, err := strconv.ParseInt(lbl[r.DrainKey], 10, 64); err == nil {
		r.Metrics.Drain.WithLabelValues(r.Ring).Observe(time.Since(time.UnixMilli(ms)).Seconds())
	}
	r.Log.V(1).Info("handed over", "kind", gr.k.GVK.Kind, "object", client.ObjectKeyFromObject(obj).String())
	return reconcile.Result{}, nil
}

// rejectedPatch reports whether the API server rejected a JSON patch as
// invalid (422): a failed test operation.
func rejectedPatch(err error) bool {
	var st apierrors.APIStatus
	return apierrors.IsInvalid(err) || (errors.As(err, &st) && st.Status().Code == http.StatusUnprocessableEntity)
}

// NewObject returns an empty object of kind k to read a request's object
// into.
func NewObject(s *spec.Spec, k spec.Kind) (client.Object, error) {
	obj, err := s.C.Scheme().New(k.GVK)
	if err != nil {
		return nil, fmt.Errorf("sharding: ring %q: new %s: %w", s.Ring, k.GVK.Kind, err)
	}
	return obj.(client.Object), nil
}
