// Package metadatawatch is a controller in the shape of
// cert-manager/approver-policy's: it reconciles ConfigMaps and watches
// Secrets through their metadata only (WatchesMetadata: the cache holds
// metav1.PartialObjectMetadata), mapping each Secret to the ConfigMap of
// the same name. Its manager options come from a configuration file in the
// shape of kubernetes-sigs/jobset's loader: pointer durations filled only
// where the options leave them nil.
package metadatawatch

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// LeaderElection is the leader-election part of a configuration file.
type LeaderElection struct {
	LeaseDuration metav1.Duration
	RenewDeadline metav1.Duration
	RetryPeriod   *metav1.Duration
}

// AddLeaderElectionTo copies the durations of cfg into o where o has none.
func AddLeaderElectionTo(o *manager.Options, cfg LeaderElection) {
	if o.LeaseDuration == nil && cfg.LeaseDuration.Duration != 0 {
		o.LeaseDuration = &cfg.LeaseDuration.Duration
	}
	if o.RenewDeadline == nil && cfg.RenewDeadline.Duration != 0 {
		o.RenewDeadline = &cfg.RenewDeadline.Duration
	}
	if o.RetryPeriod != nil || cfg.RetryPeriod == nil {
		return
	}
	o.RetryPeriod = &cfg.RetryPeriod.Duration
}

// Seen records the requests and the Secret metadata the controller saw.
type Seen struct {
	mu       sync.Mutex
	requests map[string]bool
	partial  map[string]bool // Secrets mapped from a *metav1.PartialObjectMetadata
}

// Request says whether name was reconciled.
func (s *Seen) Request(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[name]
}

// Partial says whether the Secret name arrived as metadata only.
func (s *Seen) Partial(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.partial[name]
}

func (s *Seen) add(m *map[string]bool, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *m == nil {
		*m = map[string]bool{}
	}
	(*m)[name] = true
}

// Reconciler records what it reconciles.
type Reconciler struct {
	Seen *Seen
}

// Reconcile records req.
func (r *Reconciler) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.Seen.add(&r.Seen.requests, req.Name)
	return reconcile.Result{}, nil
}

// SetupWithManager watches ConfigMaps, and Secrets by their metadata.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	toConfigMap := func(_ context.Context, obj client.Object) []reconcile.Request {
		if _, ok := obj.(*metav1.PartialObjectMetadata); ok {
			r.Seen.add(&r.Seen.partial, obj.GetName())
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}}
	}
	onlyCreates := predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool { return false },
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(toConfigMap), builder.WithPredicates(onlyCreates)).
		Complete(r)
}
