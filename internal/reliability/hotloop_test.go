package reliability_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

func deployment(ns, name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.invalid/c"}}},
			},
		},
	}
}

// TestStatusWriterSettles runs a reconciler that writes its object's
// status on every reconcile, unconditionally, the way many operators do.
// A write that changes nothing is a no-op on the server (no new
// resourceVersion, no watch event), so the loop must settle: after the
// first round, the proxy sees no more status writes, and a spec change
// costs one more round and settles again.
func TestStatusWriterSettles(t *testing.T) {
	ns := newNamespace(t)
	const n = 5
	for i := 0; i < n; i++ {
		_, err := admin.AppsV1().Deployments(ns).Create(context.Background(), deployment(ns, "d"+strconv.Itoa(i)), metav1.CreateOptions{})
		require.NoError(t, err)
	}
	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	mgr := newManager(t, p.Config(), ns, manager.Options{})
	var reconciles atomic.Int64
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&appsv1.Deployment{}).Named(unique("status-writer")).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			reconciles.Add(1)
			var d appsv1.Deployment
			if err := mgr.GetClient().Get(ctx, req.NamespacedName, &d); err != nil {
				return reconcile.Result{}, client404(err)
			}
			d.Status.ObservedGeneration = d.Generation
			d.Status.Conditions = []appsv1.DeploymentCondition{{
				Type: "Reconciled", Status: corev1.ConditionTrue, Reason: "Seen",
				Message: "generation " + strconv.FormatInt(d.Generation, 10),
			}}
			return reconcile.Result{}, mgr.GetClient().Status().Update(ctx, &d)
		})))
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()

	statusWrites := func(since time.Time) int {
		return p.Count(since, func(r faultproxy.Record) bool {
			return r.Method == http.MethodPut && strings.HasSuffix(r.Path, "/status")
		})
	}
	// settled waits for a quiet window of 3 s without a status write and
	// returns the writes since since.
	settled := func(what string, since time.Time) int {
		t.Helper()
		for {
			window := time.Now()
			time.Sleep(3 * time.Second)
			if statusWrites(window) == 0 {
				return statusWrites(since)
			}
			require.Less(t, time.Since(since), convergeWithin, "%s: status writes never stopped (a hot loop): %d", what, statusWrites(since))
		}
	}
	begin := time.Now()
	require.Eventually(t, func() bool { return statusWrites(begin) >= n }, convergeWithin, 50*time.Millisecond, "every object's status written")
	first := settled("first round", begin)
	firstReconciles := reconciles.Load()

	// A spec change: one more round, then quiet again.
	d, err := admin.AppsV1().Deployments(ns).Get(context.Background(), "d0", metav1.GetOptions{})
	require.NoError(t, err)
	d.Spec.Replicas = ptr.To[int32](2)
	_, err = admin.AppsV1().Deployments(ns).Update(context.Background(), d, metav1.UpdateOptions{})
	require.NoError(t, err)
	afterChange := time.Now()
	require.Eventually(t, func() bool { return statusWrites(afterChange) >= 1 }, convergeWithin, 50*time.Millisecond)
	second := settled("after a spec change", afterChange)
	t.Logf("first round: %d status writes, %d reconciles for %d objects; after a spec change: %d more writes; then 3 s without a write",
		first, firstReconciles, n, second)
	assert.LessOrEqual(t, first, 2*n, "a handful of writes per object, not a loop")
	assert.LessOrEqual(t, second, 3, "a spec change costs about one write")
	got, err := admin.AppsV1().Deployments(ns).Get(context.Background(), "d0", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, got.Generation, got.Status.ObservedGeneration)
}

// TestRequeueFloodKeepsOtherKeysProgressing floods the queue with keys
// that ask to be reconciled again at once, every time, while other keys
// change on the server: the changed keys still converge, the flooding
// keys keep being served, and the manager stops cleanly.
func TestRequeueFloodKeepsOtherKeysProgressing(t *testing.T) {
	ns := newNamespace(t)
	names := configMaps(t, ns, 20)
	const flooders = 100
	for i := 0; i < flooders; i++ {
		_, err := admin.CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "flood-" + strconv.Itoa(i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	mgr := newManager(t, restConfig, ns, manager.Options{GracefulShutdownTimeout: 10 * time.Second})
	var mu sync.Mutex
	last := map[string]int{}
	floods := map[string]int{}
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named(unique("flood")).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			if strings.HasPrefix(req.Name, "flood-") {
				mu.Lock()
				floods[req.Name]++
				mu.Unlock()
				return reconcile.Result{RequeueAfter: time.Nanosecond}, nil
			}
			var cm corev1.ConfigMap
			if err := mgr.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
				if apierrors.IsNotFound(err) {
					return reconcile.Result{}, nil
				}
				return reconcile.Result{}, err
			}
			n, _ := strconv.Atoi(cm.Data["n"])
			mu.Lock()
			last[req.Name] = n
			mu.Unlock()
			return reconcile.Result{}, nil
		})))
	r := start(mgr)
	r.waitStarted(t)

	writes := writeFor(t, ns, names, 3*time.Second)
	begin := time.Now()
	want := serverState(t, ns)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for name, s := range want {
			if strings.HasPrefix(name, "flood-") {
				continue
			}
			if strconv.Itoa(last[name]) != s[0] {
				return false
			}
		}
		return true
	}, convergeWithin, 50*time.Millisecond, "every changed key converged despite the flood")
	took := time.Since(begin)

	mu.Lock()
	minFlood, total := -1, 0
	for i := 0; i < flooders; i++ {
		c := floods["flood-"+strconv.Itoa(i)]
		total += c
		if minFlood < 0 || c < minFlood {
			minFlood = c
		}
	}
	mu.Unlock()

	stopBegin := time.Now()
	require.NoError(t, r.stop(t), "the manager stops cleanly under the flood")
	stopTook := time.Since(stopBegin)
	t.Logf("%d writes to 20 keys converged %s after the writes; %d flood reconciles (least-served flooder %d); stop took %s",
		writes, took, total, minFlood, stopTook)
	assert.GreaterOrEqual(t, minFlood, 3, "every flooding key kept being served")
	assert.Less(t, stopTook, 10*time.Second, "the stop did not need the graceful timeout")
}
