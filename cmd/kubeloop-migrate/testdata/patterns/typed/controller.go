// Package typed wires a controller with controller-runtime's typed forms:
// builder.TypedControllerManagedBy, source.Kind with a typed handler and
// typed predicates, handler.TypedFuncs, TypedEnqueueRequestsFromMapFunc and
// a reconcile.TypedReconciler.
package typed

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// WatchLabel marks the ConfigMaps the controller watches.
const WatchLabel = "patterns.example.com/watch"

// Reconciler records the requests it gets.
type Reconciler struct {
	mu   sync.Mutex
	seen map[string]bool
}

var _ reconcile.TypedReconciler[reconcile.Request] = &Reconciler{}

// Reconcile records req.
func (r *Reconciler) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[req.Namespace+"/"+req.Name] = true
	return reconcile.Result{}, nil
}

// Seen says whether namespace/name was reconciled.
func (r *Reconciler) Seen(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[key]
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	labelled := predicate.TypedFuncs[*corev1.ConfigMap]{
		CreateFunc: func(e event.TypedCreateEvent[*corev1.ConfigMap]) bool {
			return e.Object.Labels[WatchLabel] == "true"
		},
		UpdateFunc: func(e event.TypedUpdateEvent[*corev1.ConfigMap]) bool {
			return e.ObjectNew.Labels[WatchLabel] == "true"
		},
		DeleteFunc: func(e event.TypedDeleteEvent[*corev1.ConfigMap]) bool {
			return e.Object.Labels[WatchLabel] == "true"
		},
		GenericFunc: func(e event.TypedGenericEvent[*corev1.ConfigMap]) bool {
			return false
		},
	}

	secretToConfigMap := handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, s *corev1.Secret) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: "from-secret-" + s.Name}}}
	})

	serviceAccounts := handler.TypedFuncs[*corev1.ServiceAccount, reconcile.Request]{
		CreateFunc: func(_ context.Context, e event.TypedCreateEvent[*corev1.ServiceAccount], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.Object.Namespace, Name: "sa-" + e.Object.Name}})
		},
	}

	return builder.TypedControllerManagedBy[reconcile.Request](mgr).
		Named("typed").
		WatchesRawSource(source.Kind(mgr.GetCache(), &corev1.ConfigMap{}, &handler.TypedEnqueueRequestForObject[*corev1.ConfigMap]{}, labelled)).
		WatchesRawSource(source.Kind(mgr.GetCache(), &corev1.Secret{}, secretToConfigMap)).
		WatchesRawSource(source.Kind(mgr.GetCache(), &corev1.ServiceAccount{}, serviceAccounts)).
		Complete(r)
}
