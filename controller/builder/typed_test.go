package builder_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/reconcile"
)

// seen records the requests a reconciler was called for, with the
// ConfigMap data "x" it read from the cache (or "-" when there is none).
type seen struct {
	mu   sync.Mutex
	reqs map[string][]string
	cl   client.Client
}

func (s *seen) reconciler() reconcile.TypedFunc[reconcile.Request] {
	return func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		x := "-"
		var cm corev1.ConfigMap
		if err := s.cl.Get(ctx, req.NamespacedName, &cm); err == nil {
			x = cm.Data["x"]
		}
		s.mu.Lock()
		s.reqs[req.Name] = append(s.reqs[req.Name], x)
		s.mu.Unlock()
		return reconcile.Result{}, nil
	}
}

func (s *seen) get(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs[name])
}

// TestTypedForms runs one controller per typed form against the control
// plane and checks that each hands its typed handler and predicates the
// objects of its events, as ported controller-runtime code expects.
func TestTypedForms(t *testing.T) {
	live, ns := newNamespace(t)
	mgr := newManager(t, cfg, ns)
	cache := mgr.GetCache()
	newSeen := func() *seen { return &seen{reqs: map[string][]string{}, cl: mgr.GetClient()} }

	// TypedEnqueueRequestForObject with predicate.TypedFuncs: only an
	// update that changes data "x" passes, so the first reconcile reads
	// x=2, never x=1.
	byObject := newSeen()
	onlyX := predicate.TypedFuncs[*corev1.ConfigMap]{
		CreateFunc: func(handler.TypedCreateEvent[*corev1.ConfigMap]) bool { return false },
		UpdateFunc: func(e handler.TypedUpdateEvent[*corev1.ConfigMap]) bool {
			return e.ObjectNew.Data["x"] != e.ObjectOld.Data["x"]
		},
	}
	require.NoError(t, builder.TypedControllerManagedBy[reconcile.Request](mgr).Named("typed-object").
		WatchesRawSource(source.Kind(cache, &corev1.ConfigMap{}, &handler.TypedEnqueueRequestForObject[*corev1.ConfigMap]{}, onlyX)).
		Complete(byObject.reconciler()))

	// handler.TypedFuncs with NewTypedPredicateFuncs and
	// WithLowPriorityWhenUnchanged, through controller.NewTyped.
	byFuncs := newSeen()
	funcs := handler.TypedFuncs[*corev1.ConfigMap, reconcile.Request]{
		CreateFunc: func(_ context.Context, e handler.TypedCreateEvent[*corev1.ConfigMap], q handler.TypedQueue[reconcile.Request]) {
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.Object.Namespace, Name: "funcs-" + e.Object.Name}})
		},
	}
	hasX := predicate.NewTypedPredicateFuncs(func(cm *corev1.ConfigMap) bool { return cm.Data["x"] != "" })
	tc, err := controller.NewTyped("typed-funcs", mgr, controller.TypedOptions[reconcile.Request]{Reconciler: byFuncs.reconciler()})
	require.NoError(t, err)
	require.NoError(t, tc.Watch(source.Kind(cache, &corev1.ConfigMap{}, handler.WithLowPriorityWhenUnchanged(funcs), hasX)))

	// TypedEnqueueRequestForOwner through TypedKind, with
	// TypedResourceVersionChangedPredicate.
	byOwner := newSeen()
	require.NoError(t, builder.ControllerManagedBy(mgr).Named("typed-owner").
		WatchesRawSource(source.TypedKind(cache, &corev1.Secret{},
			handler.TypedEnqueueRequestForOwner[*corev1.Secret](mgr.GetScheme(), mgr.GetRESTMapper(), &corev1.ConfigMap{}),
			predicate.TypedResourceVersionChangedPredicate[*corev1.Secret]{})).
		Complete(byOwner.reconciler()))

	// TypedEnqueueRequestsFromMapFunc with typed And, Or and Not.
	byMap := newSeen()
	mapped := handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, s *corev1.Secret) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: "map-" + s.Name}}}
	})
	combined := predicate.And(
		predicate.Or[*corev1.Secret](predicate.TypedLabelChangedPredicate[*corev1.Secret]{}, predicate.TypedAnnotationChangedPredicate[*corev1.Secret]{}),
		predicate.Not[*corev1.Secret](predicate.TypedGenerationChangedPredicate[*corev1.Secret]{TypedFuncs: predicate.TypedFuncs[*corev1.Secret]{
			CreateFunc: func(handler.TypedCreateEvent[*corev1.Secret]) bool { return false }, // Not: creates pass
		}}),
	)
	require.NoError(t, builder.ControllerManagedBy(mgr).Named("typed-map").
		WatchesRawSource(source.Kind(cache, &corev1.Secret{}, mapped, combined)).
		Complete(byMap.reconciler()))

	// Channel and TypedChannel of typed generic events, with typed
	// predicates.
	byChannel := newSeen()
	events := make(chan handler.TypedGenericEvent[*corev1.ConfigMap], 4)
	typedEvents := make(chan handler.TypedGenericEvent[*corev1.ConfigMap], 4)
	notSkip := predicate.NewTypedPredicateFuncs(func(cm *corev1.ConfigMap) bool { return cm.Name != "skip" })
	require.NoError(t, builder.ControllerManagedBy(mgr).Named("typed-channel").
		WatchesRawSource(source.Channel(events, &handler.TypedEnqueueRequestForObject[*corev1.ConfigMap]{},
			source.WithPredicates[*corev1.ConfigMap, reconcile.Request](notSkip))).
		WatchesRawSource(source.TypedChannel(typedEvents, handler.TypedEnqueueRequestsFromMapFunc(
			func(_ context.Context, cm *corev1.ConfigMap) []reconcile.Request {
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: cm.Namespace, Name: "typed-" + cm.Name}}}
			}), source.WithPredicates[*corev1.ConfigMap, reconcile.Request](notSkip))).
		Complete(byChannel.reconciler()))

	stop, _ := mgr.start(t)
	ctx := t.Context()

	a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}, Data: map[string]string{"x": "1"}}
	require.NoError(t, live.Create(ctx, a))
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, []string{"-"}, byFuncs.get("funcs-a"))
	}, wait, 20*time.Millisecond, "TypedFuncs saw the create of a")

	// A label-only update: onlyX drops it. Let it reach the cache first.
	a.Labels = map[string]string{"l": "1"}
	require.NoError(t, live.Update(ctx, a))
	require.Eventually(t, func() bool {
		var got corev1.ConfigMap
		return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(a), &got) == nil && got.Labels["l"] == "1"
	}, wait, 20*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	assert.Empty(t, byObject.get("a"), "create and label update dropped by the typed predicate")
	a.Data["x"] = "2"
	require.NoError(t, live.Update(ctx, a))
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		got := byObject.get("a")
		assert.NotEmpty(c, got)
		for _, x := range got {
			assert.Equal(c, "2", x, "every reconcile follows the data update")
		}
	}, wait, 20*time.Millisecond)

	// A Secret controlled by a: its owner and its mapped name are enqueued.
	require.NoError(t, live.Get(ctx, client.ObjectKeyFromObject(a), a))
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: "a", UID: a.UID, Controller: ptr.To(true),
	}}}}
	require.NoError(t, live.Create(ctx, s))
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, []string{"2"}, byOwner.get("a"), "TypedEnqueueRequestForOwner enqueued the owner")
		assert.Equal(c, []string{"-"}, byMap.get("map-s"), "TypedEnqueueRequestsFromMapFunc enqueued the mapped name")
	}, wait, 20*time.Millisecond)

	events <- handler.TypedGenericEvent[*corev1.ConfigMap]{Object: configMap(ns, "skip")}
	events <- handler.TypedGenericEvent[*corev1.ConfigMap]{} // no object: dropped
	events <- handler.TypedGenericEvent[*corev1.ConfigMap]{Object: a}
	typedEvents <- handler.TypedGenericEvent[*corev1.ConfigMap]{Object: configMap(ns, "skip")}
	typedEvents <- handler.TypedGenericEvent[*corev1.ConfigMap]{Object: configMap(ns, "b")}
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, []string{"2"}, byChannel.get("a"))
		assert.Equal(c, []string{"-"}, byChannel.get("typed-b"))
	}, wait, 20*time.Millisecond)
	assert.Empty(t, byChannel.get("skip"))
	assert.Empty(t, byChannel.get("typed-skip"))
	require.NoError(t, stop())
}

// cluster is a request type of its own, as multi-cluster controllers
// written for controller-runtime use.
type cluster struct {
	reconcile.Request
	Cluster string
}

// TestTypedRequestRefused checks that a request type other than
// reconcile.Request compiles everywhere and is refused with a clear error.
func TestTypedRequestRefused(t *testing.T) {
	mgr := newOfflineManager(t)
	r := reconcile.TypedFunc[cluster](func(context.Context, cluster) (reconcile.Result, error) { return reconcile.Result{}, nil })
	h := handler.TypedFuncs[client.Object, cluster]{}
	err := builder.TypedControllerManagedBy[cluster](mgr).
		For(&corev1.ConfigMap{}).
		Watches(&corev1.Secret{}, h).
		WithOptions(controller.TypedOptions[cluster]{MaxConcurrentReconciles: 2}).
		Complete(r)
	require.ErrorIs(t, err, controller.ErrUnsupportedRequest)
	assert.Equal(t, "builder: request type builder_test.cluster is not supported: kubeloop's controllers queue reconcile.Request only; "+
		"use reconcile.Request (TypedControllerManagedBy[reconcile.Request], or ControllerManagedBy)", err.Error())

	_, err = controller.NewTyped("clusters", mgr, controller.TypedOptions[cluster]{Reconciler: r})
	assert.ErrorIs(t, err, controller.ErrUnsupportedRequest)
	assert.ErrorContains(t, err, `controller "clusters": request type builder_test.cluster is not supported`)
	_, err = controller.NewTypedUnmanaged("clusters", controller.TypedOptions[cluster]{Reconciler: r})
	assert.ErrorIs(t, err, controller.ErrUnsupportedRequest)

	src := source.TypedKind(nil, &corev1.ConfigMap{}, handler.TypedFuncs[*corev1.ConfigMap, cluster]{})
	err = src.Start(t.Context(), nil)
	assert.EqualError(t, err, "source: TypedKind: request type builder_test.cluster is not supported: kubeloop's controllers queue reconcile.Request only (use reconcile.Request)")
	assert.Error(t, src.WaitForSync(t.Context()))
	ch := source.TypedChannel(make(chan handler.TypedGenericEvent[*corev1.ConfigMap]), handler.TypedFuncs[*corev1.ConfigMap, cluster]{})
	assert.ErrorContains(t, ch.Start(t.Context(), nil), "source: TypedChannel: request type builder_test.cluster is not supported")
}
