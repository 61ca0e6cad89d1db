package controller

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/reconcile"
)

// A controller started again after it returned (a new leader term) starts
// its sources again with a new, empty queue and reconciles what they hand
// it; a Request left in the old queue is not carried over.
func TestStartAgainAfterReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var seen []string
		block := make(chan struct{})
		r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			mu.Lock()
			seen = append(seen, req.Name)
			mu.Unlock()
			if req.Name == "slow" {
				<-block
			}
			return reconcile.Result{}, nil
		})
		c := unmanaged(t, r, Options{MaxConcurrentReconciles: 1})
		left := reconcile.Request{NamespacedName: types.NamespacedName{Name: "left-in-queue"}}
		src := &gatedSource{reqs: []reconcile.Request{webReq, {NamespacedName: types.NamespacedName{Name: "slow"}}, left}, release: closed()}
		require.NoError(t, c.Watch(src))

		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- c.Start(ctx) }()
		synctest.Wait() // "slow" is in flight
		cancel()
		synctest.Wait()
		close(block) // "slow" finishes during the stop; "left-in-queue" is never taken
		require.NoError(t, <-errc)
		mu.Lock()
		assert.Equal(t, []string{"web", "slow"}, seen, "first run")
		seen = nil
		mu.Unlock()

		// A source added between runs starts with the next one.
		late := &gatedSource{reqs: []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "late"}}}, release: closed()}
		require.NoError(t, c.Watch(late))
		assert.Equal(t, int32(0), late.started.Load(), "not started between runs")

		src.reqs = []reconcile.Request{webReq} // what the informer holds now
		stop, _ := start(c)
		synctest.Wait()
		assert.Equal(t, int32(2), src.started.Load(), "the source is started again")
		assert.Equal(t, int32(1), late.started.Load())
		mu.Lock()
		assert.ElementsMatch(t, []string{"web", "late"}, seen, "second run: what the sources hand over, not the old queue's leftovers")
		mu.Unlock()
		assert.NoError(t, stop())
	})
}

// Start while a run is in progress fails and leaves the run alone.
func TestStartWhileRunningFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		c := unmanaged(t, counting(&calls), Options{})
		require.NoError(t, c.Watch(&gatedSource{reqs: []reconcile.Request{webReq}, release: closed()}))
		stop, _ := start(c)
		synctest.Wait()
		assert.EqualError(t, c.Start(context.Background()), `controller "test": already started`)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, int32(1), calls.Load(), "the running run is unaffected")
		assert.NoError(t, stop())
	})
}
