// Package builder wires a controller from a few declarative calls, with
// controller-runtime's verbs:
//
//	err := builder.ControllerManagedBy(mgr).
//		For(&appsv1.Deployment{}).          // reconcile Deployments
//		Owns(&corev1.Pod{}).                // and their owner when a Pod they control changes
//		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(mapFn)).
//		WithEventFilter(predicate.GenerationChangedPredicate{}).
//		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
//		Complete(reconciler)
//
// Guarantees:
//   - For watches the reconciled kind with handler.EnqueueRequestForObject;
//     Owns watches an owned kind with handler.EnqueueRequestForOwner, by
//     default for the controller owner only (MatchEveryOwner for every
//     owner); Watches uses the given handler.
//   - WithEventFilter's predicates apply to every watch of the builder;
//     WithPredicates applies to one.
//   - The controller's name defaults to the lower-cased kind of For.
//   - WithOptions(controller.Options{FairnessKey: controller.FairByNamespace})
//     makes the controller fair between namespaces: one namespace that
//     creates 10,000 objects delays another namespace's object by at most
//     one Request per namespace with Requests waiting, plus the reconciles
//     in flight (controller.Options.FairnessKey).
//   - Mistakes are reported by Complete/Build as one error listing all of
//     them: For called twice, neither For nor Named, Owns without For, a
//     nil reconciler, object, handler, predicate or source, a type the
//     scheme does not know in For, Owns or Watches, controller.Options that
//     controller.New rejects (a negative MaxConcurrentReconciles, say), and,
//     when all of those are right, every watched kind the API server does
//     not serve.
//   - Every informer is requested when Complete/Build runs (before leader
//     election), so standby replicas keep a warm cache; a kind the API
//     server does not serve (an uninstalled CRD) fails Complete at once,
//     unless its For, Owns or Watches has the WaitForCRD option: then the
//     controller starts without it, watches it once its CRD is installed
//     and established, stops watching it (quietly) when the CRD is deleted,
//     and watches it again when it returns. For a For kind, the queue's
//     Requests are dropped while the kind is not served.
//   - A failed Complete/Build adds nothing to the manager.
//   - Options left zero take the manager's defaults (manager.Options.
//     Controller, a config.Controller): the workers of GroupKindConcurrency
//     for For's kind ("ReplicaSet.apps"), else its MaxConcurrentReconciles,
//     and CacheSyncTimeout, RecoverPanic, NeedLeaderElection, Logger,
//     SkipNameValidation and ReconciliationTimeout. WithOptions wins.
//   - TypedBuilder and TypedControllerManagedBy[request] are
//     controller-runtime's typed forms; Builder is the TypedBuilder of
//     reconcile.Request. A typed source (source.Kind with
//     handler.TypedEnqueueRequestForObject[*v1.Foo] and typed predicates)
//     goes in through WatchesRawSource, as in controller-runtime. A request
//     type other than reconcile.Request compiles, and Complete/Build refuse
//     it with an error wrapping controller.ErrUnsupportedRequest, as
//     kubeloop's queue holds reconcile.Request.
package builder
