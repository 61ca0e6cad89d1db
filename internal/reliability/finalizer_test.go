package reliability_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/controller/controllerutil"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

const cleanupFinalizer = "reliability.kubeloop.dev/cleanup"

// ledger is the external system the cleanup writes to; it outlives the
// managers, like a cloud API would.
type ledger struct {
	mu        sync.Mutex
	step1     map[string]int
	completed map[string]int
	// removedEarly lists objects whose finalizer was removed before their
	// cleanup completed.
	removedEarly []string
}

// cleaner adds the finalizer and, on deletion, cleans up in two steps
// before removing it. With crash set it stops dead between the steps: it
// waits for its context and returns without doing anything more, as a
// killed process would.
type cleaner struct {
	mgr     *manager.Manager
	ledger  *ledger
	crash   bool
	inStep1 chan string
}

func (c *cleaner) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cl := c.mgr.GetClient()
	var cm corev1.ConfigMap
	if err := cl.Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client404(err)
	}
	if cm.DeletionTimestamp.IsZero() {
		if controllerutil.AddFinalizer(&cm, cleanupFinalizer) {
			return reconcile.Result{}, cl.Update(ctx, &cm)
		}
		return reconcile.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(&cm, cleanupFinalizer) {
		return reconcile.Result{}, nil
	}
	key := req.NamespacedName.String()
	c.ledger.mu.Lock()
	c.ledger.step1[key]++
	c.ledger.mu.Unlock()
	if c.crash {
		c.inStep1 <- key
		<-ctx.Done()
		return reconcile.Result{}, ctx.Err()
	}
	c.ledger.mu.Lock()
	c.ledger.completed[key]++
	c.ledger.mu.Unlock()
	controllerutil.RemoveFinalizer(&cm, cleanupFinalizer)
	return reconcile.Result{}, cl.Update(ctx, &cm)
}

func TestFinalizerSurvivesKilledManager(t *testing.T) {
	ns := newNamespace(t)
	names := configMaps(t, ns, 5)
	l := &ledger{step1: map[string]int{}, completed: map[string]int{}}
	ctx := context.Background()

	// An independent watcher checks the finalizer is never removed
	// before the cleanup completed.
	w, err := admin.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		had := map[string]bool{}
		for ev := range w.ResultChan() {
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok {
				continue
			}
			key := cm.Namespace + "/" + cm.Name
			has := controllerutil.ContainsFinalizer(cm, cleanupFinalizer)
			if had[key] && !has {
				l.mu.Lock()
				if l.completed[key] == 0 {
					l.removedEarly = append(l.removedEarly, key)
				}
				l.mu.Unlock()
			}
			had[key] = has
		}
	}()
	defer func() { w.Stop(); <-watchDone }()

	run := func(crash bool) (*cleaner, *running) {
		opts := manager.Options{}
		if crash {
			opts.GracefulShutdownTimeout = time.Millisecond // no drain: the crash
		}
		mgr := newManager(t, restConfig, ns, opts)
		c := &cleaner{mgr: mgr, ledger: l, crash: crash, inStep1: make(chan string, len(names))}
		require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("cleaner").
			WithOptions(controller.Options{MaxConcurrentReconciles: len(names)}).Complete(c))
		return c, start(mgr)
	}

	// First manager: adds finalizers, then dies in the middle of every
	// cleanup.
	first, r1 := run(true)
	require.Eventually(t, func() bool {
		for _, n := range names {
			cm, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, n, metav1.GetOptions{})
			if err != nil || !controllerutil.ContainsFinalizer(cm, cleanupFinalizer) {
				return false
			}
		}
		return true
	}, convergeWithin, 50*time.Millisecond, "finalizers added")
	for _, n := range names {
		require.NoError(t, admin.CoreV1().ConfigMaps(ns).Delete(ctx, n, metav1.DeleteOptions{}))
	}
	for range names {
		select {
		case <-first.inStep1:
		case <-time.After(convergeWithin): // hang bound
			t.Fatal("cleanup did not start")
		}
	}
	_ = r1.stop(t) // no graceful drain: 1 ms; an error about unfinished runnables is expected

	for _, n := range names {
		cm, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, n, metav1.GetOptions{})
		require.NoError(t, err, "the object waits for its cleanup")
		assert.True(t, controllerutil.ContainsFinalizer(cm, cleanupFinalizer))
		assert.False(t, cm.DeletionTimestamp.IsZero())
	}

	// Second manager finishes the job.
	_, r2 := run(false)
	defer func() { assert.NoError(t, r2.stop(t)) }()
	require.Eventually(t, func() bool {
		for _, n := range names {
			if _, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false
			}
		}
		return true
	}, convergeWithin, 50*time.Millisecond, "every object deleted after its cleanup")

	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range names {
		key := ns + "/" + n
		assert.GreaterOrEqual(t, l.completed[key], 1, "cleanup of %s ran", key)
		assert.GreaterOrEqual(t, l.step1[key], 2, "the interrupted cleanup of %s was started again", key)
	}
	assert.Empty(t, l.removedEarly, "no finalizer removed before its cleanup")
	t.Logf("cleanup step1 runs=%v completed=%v", l.step1, l.completed)
}
