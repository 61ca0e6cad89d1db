package builder_test

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/reconcile"
)

// A Deployment controller that also reacts to the Pods it controls and to
// ConfigMaps named after a Deployment. It needs a manager, so it has no
// output.
func Example() {
	var mgr controller.Manager // from manager.New
	r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		var d appsv1.Deployment
		if err := mgr.GetClient().Get(ctx, req.NamespacedName, &d); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		// ... compute and write the difference ...
		return reconcile.Result{}, nil
	})
	byName := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(obj)}}
	})
	err := builder.ControllerManagedBy(mgr).
		For(&appsv1.Deployment{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.Pod{}).
		Watches(&corev1.ConfigMap{}, byName, builder.OnlyMetadata).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
	if err != nil {
		panic(err)
	}
}
