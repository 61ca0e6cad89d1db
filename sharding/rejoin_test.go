package sharding_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/interceptor"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding"
)

// TestRejoinAfterLoss: a shard that cannot renew its Lease fences the
// reconcile in flight and, once its Lease writes get through again,
// rejoins without Start returning. It admits reconciles only RenewDeadline
// after the re-acquisition; the fence of the lost term keeps refusing;
// after the rejoin, an object moved to another shard while this one was
// out is not passed on as a deletion (the cache dropped it), an object
// the cache still holds but that was deleted is not reconciled from the
// stale copy, and a real deletion still reaches the reconciler.
func TestRejoinAfterLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var failing atomic.Bool
		labelled := func(name, shard string) *corev1.ConfigMap {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{shardKey: shard}}}
		}
		c := newFake(t, &interceptor.Funcs{Update: func(ctx context.Context, cl client.Client, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := obj.(*coordinationv1.Lease); ok && failing.Load() && obj.GetName() == ringName+"-shard-a" {
				return errors.New("connection refused")
			}
			return cl.Update(ctx, obj, opts...)
		}}, labelled("x", "a"), labelled("moved", "a"), labelled("deleted", "a"))
		// The shard's label-selected cache: it lags the API server.
		cache := newFake(t, nil, labelled("x", "a"), labelled("moved", "a"), labelled("deleted", "a"))
		reg := prometheus.NewRegistry()
		r := newRing(t, c, "a", func(o *sharding.Options) { o.Metrics = reg })

		var mu sync.Mutex
		calls := map[string]int{}
		var term1 context.Context
		entered := make(chan struct{})
		g, err := r.Reconciler(&corev1.ConfigMap{}, reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			mu.Lock()
			calls[req.Name]++
			first := term1 == nil
			if first {
				term1 = ctx
			}
			mu.Unlock()
			if first {
				close(entered)
				<-ctx.Done() // a reconcile in flight when the Lease is lost
			}
			return reconcile.Result{}, nil
		}))
		require.NoError(t, err)
		called := func(name string) int {
			mu.Lock()
			defer mu.Unlock()
			return calls[name]
		}
		stop, done := runRing(t, r, cache)
		synctest.Wait()
		require.NoError(t, r.Checker(nil))
		inflight := make(chan struct{})
		go func() {
			defer close(inflight)
			_, _ = g.Reconcile(context.Background(), cmReq("x"))
		}()
		<-entered
		left, err := client.FenceFrom(term1).Remaining()
		require.NoError(t, err, "the gated reconcile's context carries the shard's fence")
		assert.LessOrEqual(t, left, 10*time.Second)

		failing.Store(true)
		<-inflight
		lost := time.Now()
		require.Error(t, r.Checker(nil), "fenced")
		_, err = client.FenceFrom(term1).Remaining()
		require.ErrorIs(t, err, client.ErrLeaseLost, "the reconcile in flight is fenced")
		require.ErrorIs(t, err, sharding.ErrLeaseLost)

		// While a is out, the sharder moves "moved" to b and "deleted" is
		// deleted; a's cache drops "moved" and still holds "deleted".
		m := labelled("moved", "b")
		require.NoError(t, c.Update(context.Background(), m))
		require.NoError(t, c.Delete(context.Background(), labelled("deleted", "a")))
		require.NoError(t, cache.Delete(context.Background(), labelled("moved", "a")))
		time.Sleep(20 * time.Second)
		select {
		case err := <-done:
			t.Fatalf("Start returned instead of rejoining: %v", err)
		default:
		}
		res, err := g.Reconcile(context.Background(), cmReq("x"))
		require.NoError(t, err)
		assert.NotZero(t, res.RequeueAfter, "a shard out of the ring reconciles nothing")

		failing.Store(false)
		for r.Checker(nil) != nil {
			time.Sleep(100 * time.Millisecond)
		}
		reacquired := time.Now()
		for called("x") < 2 {
			res, err := g.Reconcile(context.Background(), cmReq("x"))
			require.NoError(t, err)
			if called("x") < 2 {
				assert.NotZero(t, res.RequeueAfter)
			}
			time.Sleep(100 * time.Millisecond)
		}
		admitted := time.Now()
		t.Logf("lost at 0, re-acquired at %s, admitting at %s", reacquired.Sub(lost), admitted.Sub(lost))
		assert.GreaterOrEqual(t, admitted.Sub(reacquired), 10*time.Second, "a rejoined shard waits RenewDeadline before it reconciles")
		_, err = client.FenceFrom(term1).Remaining()
		require.ErrorIs(t, err, client.ErrLeaseLost, "the lost term stays fenced in the next")

		_, err = g.Reconcile(context.Background(), cmReq("moved"))
		require.NoError(t, err)
		assert.Zero(t, called("moved"), "moved while out: not passed on as a deletion")
		_, err = g.Reconcile(context.Background(), cmReq("deleted"))
		require.NoError(t, err)
		assert.Zero(t, called("deleted"), "not reconciled from the cache's stale copy")
		require.NoError(t, cache.Delete(context.Background(), labelled("deleted", "a")))
		_, err = g.Reconcile(context.Background(), cmReq("deleted"))
		require.NoError(t, err)
		assert.Equal(t, 1, called("deleted"), "a deletion reaches the reconciler")

		assert.Equal(t, 1.0, counter(t, reg, "kubeloop_sharding_shard_lease_losses_total"))
		assert.Equal(t, 1.0, counter(t, reg, "kubeloop_sharding_rejoins_total"))
		select {
		case err := <-done:
			t.Fatalf("Start returned: %v", err)
		default:
		}
		require.NoError(t, stop())
	})
}

// counter returns the value of the one series of the named counter in
// reg, 0 when it has none yet.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			if len(mf.GetMetric()) != 1 {
				t.Errorf("%s: %d series", name, len(mf.GetMetric()))
				return 0
			}
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0 // a counter vector has no series before its first increment
}

// TestSweepRejudgesAGoneShard: a sweep that judged shard b gone at its
// start moves b's objects without a drain only while the judgment is
// younger than half of RenewDeadline; past that it reads b's Lease again,
// and when b has rejoined meanwhile (its Lease changed) it leaves b's
// objects alone. Without the rejoin the same sweep moves them.
func TestSweepRejudgesAGoneShard(t *testing.T) {
	for _, rejoin := range []bool{false, true} {
		t.Run(map[bool]string{false: "still gone", true: "rejoined during the sweep"}[rejoin], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var slow atomic.Bool
				var c client.Client
				c = newFake(t, &interceptor.Funcs{List: func(ctx context.Context, cl client.Client, list client.ObjectList, opts ...client.ListOption) error {
					if _, ok := list.(*metav1.PartialObjectMetadataList); ok && slow.Load() {
						// A slow page: RenewDeadline/2 passes between the
						// judgment and the moves; b may rejoin meanwhile.
						time.Sleep(6 * time.Second)
						if rejoin {
							putLease(t, c, "b", 0)
						}
					}
					return cl.List(ctx, list, opts...)
				}}, configMaps(40, map[string]string{shardKey: "b"})...)
				putLease(t, c, "a", 0)
				putLeaseFor(t, c, "b", 0, 15*time.Second)
				r := newRing(t, c, "a")
				_, err := r.Sweep(context.Background()) // observes b's Lease
				require.NoError(t, err)
				time.Sleep(16 * time.Second) // b did not renew for its duration
				putLease(t, c, "a", 0)
				slow.Store(true)
				res, err := r.Sweep(context.Background())
				require.NoError(t, err)
				onB := 0
				for _, cm := range listCMs(t, c) {
					if cm.Labels[shardKey] == "b" {
						onB++
					}
				}
				if rejoin {
					assert.Zero(t, res.Reassigned, "a rejoined shard's objects are not moved without a drain")
					assert.Equal(t, 40, onB)
				} else {
					assert.Equal(t, 40, res.Reassigned, "a gone shard's objects move at once")
					assert.Zero(t, onB)
				}
			})
		})
	}
}

// The shard's lost-Lease sentinel is the client's: one errors.Is answers
// for a write refused by a gated reconcile's fence and for Start's error
// with ExitOnLeaseLoss.
func ExampleErrLeaseLost() {
	refused := fmt.Errorf("update v1, Kind=ConfigMap default/web: fenced: lease ops/my-ring-shard-a: %w", client.ErrLeaseLost)
	fmt.Println(errors.Is(refused, sharding.ErrLeaseLost))
	// Output: true
}
