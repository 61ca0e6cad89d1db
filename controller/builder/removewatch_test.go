package builder_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// TestRemoveWatchOfARunningController: two watches of ConfigMaps feed one
// controller, each under its own prefix; after RemoveWatch of one, the
// other's events are still reconciled and the removed one's are not, and
// the shared informer stays.
//
// The check of "not" is by order, not by time: one worker and a first in,
// first out queue, and one informer that hands each event to every
// registered handler before the next event. Had the removed watch still
// enqueued the update of "x", that Request would have been reconciled
// before the one for the later creation of "y".
func TestRemoveWatchOfARunningController(t *testing.T) {
	live, ns := newNamespace(t)
	mgr, err := manager.New(cfg, manager.Options{Logger: (&errorLog{}).recording(t)})
	require.NoError(t, err)

	var mu sync.Mutex
	counts := map[string]int{}
	ctrl, err := controller.New("removewatch-"+string(uuid.NewUUID())[:8], mgr, controller.Options{
		Reconciler: reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
			mu.Lock()
			counts[req.Name]++
			mu.Unlock()
			return reconcile.Result{}, nil
		}),
	})
	require.NoError(t, err)
	prefixed := func(prefix string) handler.EventHandler {
		return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: prefix + obj.GetName()}}}
		})
	}
	inNS := predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetNamespace() == ns })
	kept := source.Kind(mgr.GetCache(), &corev1.ConfigMap{}, prefixed("a-"), inNS)
	removed := source.Kind(mgr.GetCache(), &corev1.ConfigMap{}, prefixed("b-"), inNS)
	require.NoError(t, ctrl.Watch(kept))
	require.NoError(t, ctrl.Watch(removed))

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })

	count := func(name string) int { mu.Lock(); defer mu.Unlock(); return counts[name] }
	reached := func(name string, n int) func() bool { return func() bool { return count(name) >= n } }

	x := configMap(ns, "x")
	require.NoError(t, live.Create(t.Context(), x))
	require.Eventually(t, reached("a-x", 1), wait, 20*time.Millisecond)
	require.Eventually(t, reached("b-x", 1), wait, 20*time.Millisecond, "both watches feed the controller")

	require.NoError(t, ctrl.RemoveWatch(removed))
	x.Data = map[string]string{"key": "changed"}
	require.NoError(t, live.Update(t.Context(), x))
	require.Eventually(t, reached("a-x", 2), wait, 20*time.Millisecond, "the kept watch sees the update")
	require.NoError(t, live.Create(t.Context(), configMap(ns, "y")))
	require.Eventually(t, reached("a-y", 1), wait, 20*time.Millisecond)

	assert.Equal(t, 1, count("b-x"), "the removed watch enqueued the update")
	assert.Equal(t, 0, count("b-y"), "the removed watch enqueued the creation")
	assert.True(t, holdsKind(mgr.GetCache(), "", "ConfigMap"), "the shared informer stays")
	assert.ErrorIs(t, ctrl.RemoveWatch(removed), controller.ErrWatchNotFound)
}
