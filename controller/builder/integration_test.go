package builder_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

// wait is the deadline of the Eventually checks: generous, as the machine
// is shared; it bounds a hang, it does not measure speed.
const wait = 90 * time.Second

var nsCounter atomic.Int32

// newNamespace creates a namespace unique to the test and returns a live
// client (no cache) and the namespace name.
func newNamespace(t *testing.T) (client.Client, string) {
	t.Helper()
	live, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	name := fmt.Sprintf("%s-%d", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), nsCounter.Add(1))
	if len(name) > 63 {
		name = name[len(name)-63:]
	}
	name = strings.Trim(name, "-")
	require.NoError(t, live.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	return live, name
}

func configMap(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"key": name}}
}

// secretMaker reconciles a ConfigMap by creating a Secret of the same name
// that the ConfigMap controls, and counts reconciles per name.
type secretMaker struct {
	client  client.Client
	mu      sync.Mutex
	counts  map[string]int
	created atomic.Int32
}

func (r *secretMaker) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	r.counts[req.Name]++
	r.mu.Unlock()
	var cm corev1.ConfigMap
	if err := r.client.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID, Controller: ptr.To(true),
		}}},
		StringData: cm.Data,
	}
	err := r.client.Create(ctx, secret)
	switch {
	case err == nil:
		r.created.Add(1)
	case !apierrors.IsAlreadyExists(err):
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

func TestForOwnsReconcilesThousandObjects(t *testing.T) {
	const n = 1000
	live, ns := newNamespace(t)
	mgr := newManager(t, cfg, ns)
	r := &secretMaker{client: mgr.GetClient(), counts: map[string]int{}}
	require.NoError(t, builder.ControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		Owns(&corev1.Secret{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r))
	stop, _ := mgr.start(t)

	for i := range n {
		require.NoError(t, live.Create(t.Context(), configMap(ns, fmt.Sprintf("cm-%04d", i))))
	}
	require.Eventually(t, func() bool { return r.created.Load() == n }, wait, 50*time.Millisecond,
		"every ConfigMap got its Secret")

	var secrets corev1.SecretList
	require.NoError(t, live.List(t.Context(), &secrets, client.InNamespace(ns)))
	require.Len(t, secrets.Items, n)
	for _, s := range secrets.Items {
		owner := metav1.GetControllerOf(&s)
		require.NotNil(t, owner, s.Name)
		assert.Equal(t, s.Name, owner.Name)
	}
	r.mu.Lock()
	assert.Len(t, r.counts, n, "every ConfigMap reconciled")
	r.mu.Unlock()
	assert.NoError(t, stop())
	got := gatherValues(t, mgr)
	assert.GreaterOrEqual(t, got[`controller_runtime_reconcile_total{controller="configmap",result="success"}`], float64(n))
	assert.Equal(t, 4.0, got[`controller_runtime_max_concurrent_reconciles{controller="configmap"}`])
}

func TestOwnedChangeTriggersOwner(t *testing.T) {
	live, ns := newNamespace(t)
	mgr := newManager(t, cfg, ns)
	var count atomic.Int32
	r := reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		if req.Name == "owner" {
			count.Add(1)
		}
		return reconcile.Result{}, nil
	})
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Owns(&corev1.Secret{}).Complete(r))
	mgr.start(t)
	reconciledTimes := func(n int32, msg string) {
		t.Helper()
		if !assert.Eventually(t, func() bool { return count.Load() >= n }, wait, 10*time.Millisecond, msg) {
			t.Logf("reconciles of owner: %d; metrics: %v", count.Load(), gatherValues(t, mgr))
			t.FailNow()
		}
		assert.Equal(t, n, count.Load(), msg)
	}

	owner := configMap(ns, "owner")
	require.NoError(t, live.Create(t.Context(), owner))
	reconciledTimes(1, "the owner's create")

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owned", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true),
	}}}}
	require.NoError(t, live.Create(t.Context(), secret))
	reconciledTimes(2, "the owned Secret's create")

	secret.Labels = map[string]string{"touched": "yes"}
	require.NoError(t, live.Update(t.Context(), secret))
	reconciledTimes(3, "the owned Secret's update")

	require.NoError(t, live.Delete(t.Context(), secret))
	reconciledTimes(4, "the owned Secret's delete")
}

func TestFailingReconcileBacksOff(t *testing.T) {
	live, ns := newNamespace(t)
	mgr := newManager(t, cfg, ns)
	const base = 100 * time.Millisecond
	var mu sync.Mutex
	var attempts []time.Time
	r := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		attempts = append(attempts, time.Now())
		return reconcile.Result{}, fmt.Errorf("attempt %d failed", len(attempts))
	})
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{RateLimiter: workqueue.NewItemExponentialFailureRateLimiter[reconcile.Request](base, time.Minute)}).
		Complete(r))
	stop, _ := mgr.start(t)
	require.NoError(t, live.Create(t.Context(), configMap(ns, "flaky")))
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(attempts) >= 5 }, wait, 20*time.Millisecond)
	require.NoError(t, stop())

	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < 5; i++ {
		delay := attempts[i].Sub(attempts[i-1])
		assert.GreaterOrEqual(t, delay, base<<(i-1), "attempt %d waited at least its backoff", i)
		if i > 1 {
			assert.Greater(t, delay, attempts[i-1].Sub(attempts[i-2]), "the delay before attempt %d grew", i)
		}
	}
	got := gatherValues(t, mgr)
	assert.GreaterOrEqual(t, got[`controller_runtime_reconcile_errors_total{controller="configmap"}`], 5.0)
}

func TestPanickingReconcilerDoesNotStopController(t *testing.T) {
	live, ns := newNamespace(t)
	mgr := newManager(t, cfg, ns)
	var badAttempts atomic.Int32
	var mu sync.Mutex
	good := map[string]bool{}
	r := reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		if req.Name == "bad" {
			badAttempts.Add(1)
			var m map[string]int
			m["boom"]++ // panics
		}
		mu.Lock()
		good[req.Name] = true
		mu.Unlock()
		return reconcile.Result{}, nil
	})
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(r))
	mgr.start(t)

	require.NoError(t, live.Create(t.Context(), configMap(ns, "bad")))
	require.Eventually(t, func() bool { return badAttempts.Load() >= 2 }, wait, 20*time.Millisecond, "the panicking request is retried")
	for i := range 3 {
		require.NoError(t, live.Create(t.Context(), configMap(ns, fmt.Sprint("good-", i))))
	}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return good["good-0"] && good["good-1"] && good["good-2"]
	}, wait, 20*time.Millisecond, "the controller keeps reconciling after panics")
	assert.GreaterOrEqual(t, gatherValues(t, mgr)[`controller_runtime_reconcile_panics_total{controller="configmap"}`], 2.0)
}

func TestShutdownWaitsForInFlightReconcile(t *testing.T) {
	live, ns := newNamespace(t)
	mgr := newManager(t, cfg, ns)
	started := make(chan struct{})
	var once sync.Once
	var finished atomic.Bool
	r := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		once.Do(func() { close(started) })
		time.Sleep(2 * time.Second) // ignores ctx, like a slow external call
		finished.Store(true)
		return reconcile.Result{}, nil
	})
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(r))
	stop, _ := mgr.start(t)
	require.NoError(t, live.Create(t.Context(), configMap(ns, "slow")))
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("reconcile did not start")
	}
	require.NoError(t, stop())
	assert.True(t, finished.Load(), "Start returned only after the reconcile in flight finished")
}

func TestInformersRequestedAtBuild(t *testing.T) {
	live, ns := newNamespace(t)
	require.NoError(t, live.Create(t.Context(), configMap(ns, "warm")))
	mgr := newManager(t, cfg, ns)
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Complete(noop))

	// A standby replica: the cache runs, the controller does not.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.cache.Start(ctx) }()
	defer func() { cancel(); <-done }()
	require.True(t, mgr.cache.WaitForCacheSync(t.Context()))

	var list corev1.ConfigMapList
	require.NoError(t, mgr.cache.List(t.Context(), &list, client.InNamespace(ns)))
	require.Len(t, list.Items, 1)
	assert.Equal(t, "warm", list.Items[0].Name)
	ic, ok := mgr.cache.(*cache.InformerCache)
	require.True(t, ok)
	assert.Equal(t, int64(0), ic.LazyInformerStarts(), "the ConfigMap informer existed before the read")
}

func TestSyncFailureNamesKindAndCause(t *testing.T) {
	_, ns := newNamespace(t)
	nobody, err := env.AddUser(envtest.User{Name: "nobody"})
	require.NoError(t, err)
	mgr := newManager(t, nobody, ns)
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{CacheSyncTimeout: 3 * time.Second}).
		Complete(noop))
	_, errs := mgr.start(t)
	var got error
	select {
	case got = <-errs:
	case <-time.After(wait):
		t.Fatal("the controller did not fail")
	}
	require.Error(t, got)
	t.Log(got)
	assert.Contains(t, got.Error(), `controller "configmap": source: kind ConfigMap did not sync: CacheSyncTimeout 3s exceeded`)
	assert.Contains(t, got.Error(), "forbidden")
}

func TestDuplicateControllerName(t *testing.T) {
	mgr := newOfflineManager(t)
	mgr.cache = nil
	require.NoError(t, builder.ControllerManagedBy(mgr).Named("same").WatchesRawSource(nopSource{}).Complete(noop))
	err := builder.ControllerManagedBy(mgr).Named("same").WatchesRawSource(nopSource{}).Complete(noop)
	assert.EqualError(t, err, `builder: controller "same": add to manager: manager: a controller named "same" was already added`)
}

// nopSource has no events.
type nopSource struct{}

func (nopSource) Start(context.Context, handlerQueue) error { return nil }
func (nopSource) WaitForSync(context.Context) error         { return nil }

func TestPredicatesAndOnlyMetadata(t *testing.T) {
	live, ns := newNamespace(t)
	mgr := newManager(t, cfg, ns)
	var mu sync.Mutex
	var reconciled []string
	r := reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		reconciled = append(reconciled, req.Name)
		return reconcile.Result{}, nil
	})
	labelled := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()["watch"] == "yes" })
	notSkipped := predicate.NewPredicateFuncs(func(o client.Object) bool { return !strings.HasPrefix(o.GetName(), "skip-") })
	var secretTypes sync.Map
	secretToConfigMap := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		secretTypes.Store(fmt.Sprintf("%T", o), true)
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: "from-" + o.GetName()}}}
	})
	require.NoError(t, builder.ControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}, builder.WithPredicates(labelled)).
		Watches(&corev1.Secret{}, secretToConfigMap, builder.OnlyMetadata).
		WithEventFilter(notSkipped).
		Complete(r))
	mgr.start(t)

	ignored := configMap(ns, "ignored")
	wanted := configMap(ns, "wanted")
	wanted.Labels = map[string]string{"watch": "yes"}
	require.NoError(t, live.Create(t.Context(), ignored))
	require.NoError(t, live.Create(t.Context(), wanted))
	require.NoError(t, live.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "skip-s"}}))
	require.NoError(t, live.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"}}))
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(reconciled, "from-s") && slices.Contains(reconciled, "wanted")
	}, wait, 20*time.Millisecond)
	// Within one informer, events reach the queue in order and one worker
	// takes them in order: had "ignored" or "skip-s" passed the
	// predicates, they would have been reconciled before "wanted" and "s".
	mu.Lock()
	assert.ElementsMatch(t, []string{"wanted", "from-s"}, reconciled,
		"For's predicate dropped ignored, WithEventFilter dropped skip-s")
	mu.Unlock()
	_, metadataOnly := secretTypes.Load("*v1.PartialObjectMetadata")
	assert.True(t, metadataOnly, "OnlyMetadata delivers PartialObjectMetadata")
}

func TestUninstalledKindFailsAtBuild(t *testing.T) {
	_, ns := newNamespace(t)
	mgr := newManager(t, cfg, ns)
	widget := &unstructured.Unstructured{}
	widget.SetAPIVersion("example.com/v1")
	widget.SetKind("Widget")
	err := builder.ControllerManagedBy(mgr).For(widget).Complete(noop)
	require.Error(t, err)
	t.Log(err)
	assert.Contains(t, err.Error(), `controller "widget": watch: source: get informer for kind Widget.example.com: `)
	assert.Empty(t, mgr.runnables, "nothing added to the manager")
}

func TestEveryMistakeReportedAgainstServer(t *testing.T) {
	_, ns := newNamespace(t)
	mgr := newManager(t, cfg, ns)
	// The case: an unregistered type and a nil reconciler.
	err := builder.ControllerManagedBy(mgr).For(&unknownType{}).Complete(nil)
	require.Error(t, err)
	assert.Equal(t, "builder: Complete/Build needs a reconciler, got nil\n"+
		"builder: For(*builder_test.unknownType): "+notRegistered, err.Error())

	// Two kinds the API server does not serve: both are named.
	uninstalled := func(kind string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("example.com/v1")
		u.SetKind(kind)
		return u
	}
	err = builder.ControllerManagedBy(mgr).For(uninstalled("Widget")).
		Watches(uninstalled("Gadget"), &handler.EnqueueRequestForObject{}).Complete(noop)
	require.Error(t, err)
	t.Log(err)
	assert.Contains(t, err.Error(), `controller "widget": watch: source: get informer for kind Widget.example.com: `)
	assert.Contains(t, err.Error(), `controller "widget": watch: source: get informer for kind Gadget.example.com: `)
	assert.Empty(t, mgr.runnables, "nothing added to the manager")
}
