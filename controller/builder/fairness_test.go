package builder_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// The bound these tests state: with W workers busy and T tenants with
// Requests waiting, a fair queue hands out a quiet tenant's Request within
// its next T Requests. Here T = 2 (the flooding tenant and the quiet one),
// so at most W + 1 reconciles start before the quiet tenant's: the W that
// were in flight when it arrived and at most one more of the flood. The
// workers are held and then released one reconcile at a time, so the order
// in which reconciles start is the order the queue hands Requests out, and
// the assertion is on that order, never on time.
const fairWorkers = 4

// TestFairByNamespaceServesQuietTenantWithinFlood: tenant A (namespace a)
// creates 10,000 ConfigMaps with 8 writers, then tenant B creates one; B's
// reconcile starts after at most fairWorkers+1 others, not after A's
// 10,000.
func TestFairByNamespaceServesQuietTenantWithinFlood(t *testing.T) {
	const flood = 10000
	got := runTenants(t, flood, controller.FairByNamespace)
	t.Logf("fair by namespace: %d reconciles started before tenant B's, of %d queued for tenant A", got, flood)
	assert.LessOrEqual(t, got, fairWorkers+1, "tenant B waited behind tenant A's flood")
}

// TestWithoutFairnessQuietTenantWaitsForFlood is the control: the same
// scenario without a FairnessKey serves first in, first out, so B's
// reconcile starts only after every one of A's (a smaller flood keeps the
// test short; the point is that the bound above can fail).
func TestWithoutFairnessQuietTenantWaitsForFlood(t *testing.T) {
	const flood = 300
	got := runTenants(t, flood, nil)
	t.Logf("first in, first out: %d reconciles started before tenant B's", got)
	assert.Equal(t, flood, got, "without fairness, B's Request queues behind all of A's")
}

// runTenants runs a manager with a controller built by the builder, with
// fairnessKey and fairWorkers workers, whose reconciles are held. Tenant A
// creates flood ConfigMaps; once every one of them is queued (the workers
// hold fairWorkers of them), tenant B creates one. The workers are then
// released one reconcile at a time until B's starts; runTenants returns
// how many reconciles started before it.
func runTenants(t *testing.T, flood int, fairnessKey func(reconcile.Request) string) int {
	t.Helper()
	live, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	suffix := string(uuid.NewUUID())[:8]
	nsA, nsB := "tenant-a-"+suffix, "tenant-b-"+suffix
	for _, ns := range []string{nsA, nsB} {
		require.NoError(t, live.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	t.Cleanup(func() {
		// There is no namespace controller in the test control plane:
		// drop the flood itself so later tests do not carry it.
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		assert.NoError(t, live.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(nsA)))
		assert.NoError(t, live.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(nsB)))
	})

	mgr, err := manager.New(cfg, manager.Options{
		Logger: testenv.Logger(),
		Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{nsA: {}, nsB: {}}},
	})
	require.NoError(t, err)

	// Every reconcile reports that it started, then waits for a token.
	started := make(chan reconcile.Request, flood+1)
	tokens := make(chan struct{})
	r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		started <- req
		select {
		case <-tokens:
		case <-ctx.Done():
		}
		return reconcile.Result{}, nil
	})

	// The handler enqueues as For would and counts what it queued.
	var queuedA, initial atomic.Int64
	floodQueued, quietQueued, registered := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var onceB sync.Once
	enqueue := &handler.EnqueueRequestForObject{}
	h := handler.Funcs{CreateFunc: func(ctx context.Context, evt handler.CreateEvent, q handler.Queue) {
		enqueue.Create(ctx, evt, q)
		if evt.IsInInitialList {
			initial.Add(1)
		}
		switch evt.Object.GetNamespace() {
		case nsA:
			if queuedA.Add(1) == int64(flood) {
				close(floodQueued)
			}
		case nsB:
			onceB.Do(func() { close(quietQueued) })
		}
	}}
	require.NoError(t, builder.ControllerManagedBy(mgr).
		Named("tenants").
		Watches(&corev1.ConfigMap{}, h).
		// Started after the ConfigMap source, whose handler is then
		// registered: every ConfigMap created from now on is a watch event.
		WatchesRawSource(source.Func(func(context.Context, handler.Queue) error { close(registered); return nil })).
		WithOptions(controller.Options{MaxConcurrentReconciles: fairWorkers, FairnessKey: fairnessKey}).
		Complete(r))

	stop := testenv.Start(mgr)
	defer func() { assert.NoError(t, stop()) }()
	select {
	case <-registered:
	case <-time.After(wait):
		t.Fatal("the controller did not start")
	}

	// Tenant A floods with 8 writers.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < flood; i += 8 {
				if err := live.Create(t.Context(), configMap(nsA, fmt.Sprintf("a-%05d", i))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	waitFor(t, floodQueued, "every ConfigMap of tenant A to be queued")

	// The workers hold fairWorkers of A's Requests; the rest wait.
	for range fairWorkers {
		req := receive(t, started)
		require.Equal(t, nsA, req.Namespace)
	}
	require.NoError(t, live.Create(t.Context(), configMap(nsB, "b")))
	waitFor(t, quietQueued, "tenant B's ConfigMap to be queued")
	require.Zero(t, initial.Load(), "every Request came from a watch event, at one priority")

	// Release one reconcile at a time: the next one to start is the next
	// Request the queue hands out.
	before := fairWorkers
	for {
		tokens <- struct{}{}
		req := receive(t, started)
		if req.Namespace == nsB {
			return before
		}
		before++
	}
}

func receive(t *testing.T, c <-chan reconcile.Request) reconcile.Request {
	t.Helper()
	select {
	case req := <-c:
		return req
	case <-time.After(wait):
		t.Fatal("no reconcile started")
		return reconcile.Request{}
	}
}

func waitFor(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(wait):
		t.Fatalf("timed out waiting for %s", what)
	}
}
