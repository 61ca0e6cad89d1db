// Package janitor is the TTL janitor: it deletes ConfigMaps whose
// janitor.kubeloop.dev/ttl annotation (a Go duration such as "90s" or
// "24h") has run out since their creation. It is time-driven: an object
// that has not expired yet is looked at again exactly when it will, through
// Result.RequeueAfter, with no polling. It runs with leader election, so of
// several replicas only the leader deletes.
package janitor

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// TTLAnnotation holds how long after its creation an object may live.
const TTLAnnotation = "janitor.kubeloop.dev/ttl"

// Reconciler deletes expired ConfigMaps.
type Reconciler struct {
	Client client.Client
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// OnDelete, if set, is called after each deletion (tests count them).
	OnDelete func(client.ObjectKey)
}

// SetupWithManager registers the janitor with mgr. Only ConfigMaps that
// carry the annotation reach the queue.
func SetupWithManager(mgr *manager.Manager, r *Reconciler) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	return builder.ControllerManagedBy(mgr).
		Named("ttl-janitor").
		For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			_, ok := obj.GetAnnotations()[TTLAnnotation]
			return ok
		}))).
		Complete(r)
}

// Reconcile deletes the ConfigMap if its TTL has run out, else asks to be
// called again when it will.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Client.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	raw, ok := cm.Annotations[TTLAnnotation]
	if !ok || !cm.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	ttl, err := time.ParseDuration(raw)
	if err != nil || ttl < 0 {
		// Retrying cannot fix a bad annotation; the next edit of the
		// object brings it back.
		return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("configmap %s: annotation %s=%q is not a non-negative duration", req, TTLAnnotation, raw))
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	left := cm.CreationTimestamp.Add(ttl).Sub(now())
	if left > 0 {
		return reconcile.Result{RequeueAfter: left}, nil
	}
	// Delete only the object we looked at: if it was replaced by a new
	// one of the same name, the precondition fails and the new one gets
	// its own reconcile.
	if err := r.Client.Delete(ctx, &cm, client.Preconditions{UID: &cm.UID}); client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, fmt.Errorf("delete expired configmap: %w", err)
	}
	if r.OnDelete != nil {
		r.OnDelete(req.NamespacedName)
	}
	return reconcile.Result{}, nil
}
