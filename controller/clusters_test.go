package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

// namedCluster is a Cluster with a name only: the tests' sources are
// channels, not informers.
type namedCluster string

func (n namedCluster) Name() string                 { return string(n) }
func (namedCluster) GetCache() cache.Cache          { return nil }
func (namedCluster) GetClient() client.Client       { return nil }
func (namedCluster) GetRESTMapper() meta.RESTMapper { return nil }

// fleetChannels makes a ClusterWatch whose source on each cluster is a
// channel of the returned map, created on first use.
type fleetChannels struct {
	mu sync.Mutex
	ch map[string]chan handler.GenericEvent
}

func (f *fleetChannels) of(cluster string) chan handler.GenericEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ch == nil {
		f.ch = map[string]chan handler.GenericEvent{}
	}
	if f.ch[cluster] == nil {
		f.ch[cluster] = make(chan handler.GenericEvent, 16)
	}
	return f.ch[cluster]
}

func (f *fleetChannels) watch(matches func(string) bool) ClusterWatch {
	return ClusterWatch{Matches: matches, Source: func(cl Cluster) (source.Source, error) {
		return source.Channel(f.of(cl.Name()), &handler.EnqueueRequestForObject{}), nil
	}}
}

// requests records every Request reconciled.
type requests struct {
	mu   sync.Mutex
	reqs []reconcile.Request
}

func (r *requests) Reconcile(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return reconcile.Result{}, nil
}

func (r *requests) seen() []reconcile.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]reconcile.Request(nil), r.reqs...)
}

func inCluster(cluster, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: name}, Cluster: cluster}
}

// TestClusterWatchesStampTheCluster: Requests of a cluster's source carry
// its name, those of the local source none; a filter keeps a cluster out.
func TestClusterWatchesStampTheCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &requests{}
		c := unmanaged(t, rec, Options{})
		localCh := make(chan handler.GenericEvent, 1)
		require.NoError(t, c.Watch(source.Channel(localCh, &handler.EnqueueRequestForObject{})))
		var fleet fleetChannels
		require.NoError(t, c.WatchClusters(fleet.watch(func(n string) bool { return n != "skipped" })))
		assert.True(t, c.HasClusterWatches())

		ctx := t.Context()
		require.NoError(t, c.EngageCluster(ctx, namedCluster("east")))
		require.NoError(t, c.EngageCluster(ctx, namedCluster("skipped")))
		stop, _ := start(c)
		require.NoError(t, c.EngageCluster(ctx, namedCluster("west")), "engaged while running")
		assert.Equal(t, []string{"east", "skipped", "west"}, c.EngagedClusters())

		localCh <- event("a")
		fleet.of("east") <- event("b")
		fleet.of("west") <- event("c")
		fleet.of("skipped") <- event("d") // no source reads it
		synctest.Wait()
		assert.ElementsMatch(t, []reconcile.Request{inCluster("", "a"), inCluster("east", "b"), inCluster("west", "c")}, rec.seen())
		require.NoError(t, stop())
	})
}

// TestDisengageDropsQueuedRequests: Requests of a cluster still queued
// when it leaves are not reconciled; the other cluster's are.
func TestDisengageDropsQueuedRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		var mu sync.Mutex
		var got []reconcile.Request
		r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			<-gate
			mu.Lock()
			got = append(got, req)
			mu.Unlock()
			return reconcile.Result{}, errors.New("fails, so it would be retried")
		})
		c := unmanaged(t, r, Options{})
		var fleet fleetChannels
		require.NoError(t, c.WatchClusters(fleet.watch(nil)))
		ctx := t.Context()
		require.NoError(t, c.EngageCluster(ctx, namedCluster("stays")))
		leavesCtx, leave := context.WithCancel(ctx)
		require.NoError(t, c.EngageCluster(leavesCtx, namedCluster("leaves")))
		stop, _ := start(c)

		fleet.of("leaves") <- event("first") // taken by the one worker, held at the gate
		synctest.Wait()
		for _, n := range []string{"q1", "q2", "q3"} {
			fleet.of("leaves") <- event(n)
		}
		fleet.of("stays") <- event("s1")
		synctest.Wait()
		leave() // the provider ends the cluster's context
		synctest.Wait()
		assert.Equal(t, []string{"stays"}, c.EngagedClusters())
		close(gate)
		synctest.Wait()
		mu.Lock()
		assert.Equal(t, []reconcile.Request{inCluster("leaves", "first"), inCluster("stays", "s1")}, got[:2],
			"the reconcile in flight returns; the queued ones of the cluster that left are dropped")
		for _, req := range got[2:] {
			assert.Equal(t, "stays", req.Cluster, "only the cluster that stayed is retried")
		}
		mu.Unlock()
		require.NoError(t, stop())
	})
}

// TestStartDoesNotWaitForClusterSources: a cluster whose source never
// syncs does not hold Start back: the local source's Requests reconcile.
func TestStartDoesNotWaitForClusterSources(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		c := unmanaged(t, counting(&calls), Options{})
		require.NoError(t, c.Watch(&gatedSource{reqs: []reconcile.Request{webReq}, release: closed()}))
		never := &gatedSource{release: make(chan struct{})}
		require.NoError(t, c.WatchClusters(ClusterWatch{Source: func(Cluster) (source.Source, error) { return never, nil }}))
		require.NoError(t, c.EngageCluster(t.Context(), namedCluster("unreachable")))
		stop, _ := start(c)
		synctest.Wait()
		assert.Equal(t, int32(1), calls.Load(), "the workers run although the cluster's source has not synced")
		assert.Equal(t, int32(1), never.started.Load())
		require.NoError(t, stop())
	})
}

func TestEngageClusterErrors(t *testing.T) {
	c := unmanaged(t, counting(new(atomic.Int32)), Options{})
	require.NoError(t, c.WatchClusters(ClusterWatch{Source: func(cl Cluster) (source.Source, error) {
		return nil, errors.New("no informer")
	}}))
	assert.ErrorContains(t, c.EngageCluster(t.Context(), namedCluster("")), "without a name")
	err := c.EngageCluster(t.Context(), namedCluster("east"))
	assert.ErrorContains(t, err, `controller "test": cluster "east": source: no informer`)
	assert.Empty(t, c.EngagedClusters(), "a failed engagement leaves nothing behind")
	assert.ErrorContains(t, c.WatchClusters(ClusterWatch{}), "nil Source")
}

// TestClusterRateLimiter: one cluster's failures do not grow another's
// backoff; a cluster that left has its history dropped.
func TestClusterRateLimiter(t *testing.T) {
	rl := PerClusterRateLimiter(nil)
	east, west := inCluster("east", "web"), inCluster("west", "web")
	for range 5 {
		rl.When(east)
	}
	assert.Equal(t, 5, rl.NumRequeues(east))
	assert.Equal(t, 0, rl.NumRequeues(west), "the same object in another cluster has no failures")
	assert.Equal(t, workqueue.DefaultRateLimiter[reconcile.Request]().When(west), rl.When(west), "west starts at the base delay")
	assert.Equal(t, 2, rl.Clusters())
	rl.ForgetCluster("east")
	rl.Forget(east) // makes no limiter
	assert.Equal(t, 1, rl.Clusters())
	assert.Equal(t, 0, rl.NumRequeues(east))
}

func TestFairByCluster(t *testing.T) {
	assert.Equal(t, "east", FairByCluster(inCluster("east", "web")))
	assert.Equal(t, "", FairByCluster(webReq), "the manager's own cluster is one tenant")
}

// TestFairByClusterBoundsQuietCluster: clusters flood the queue through
// their own sources while the workers are held; a quiet cluster's one
// Request then starts after at most workers + flooding clusters
// reconciles (W + T - 1, T counting the quiet one), and after every flood
// Request without fairness.
func TestFairByClusterBoundsQuietCluster(t *testing.T) {
	const (
		workers    = 3
		perCluster = 100
	)
	floods := []string{"a", "c", "d"}
	tests := []struct {
		name    string
		give    func(reconcile.Request) string
		wantMax int
	}{
		{"fair by cluster", FairByCluster, workers + len(floods)},
		{"first in first out", nil, len(floods) * perCluster},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			started := make(chan reconcile.Request, len(floods)*perCluster+1)
			tokens := make(chan struct{})
			r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				started <- req
				select {
				case <-tokens:
				case <-ctx.Done():
				}
				return reconcile.Result{}, nil
			})
			c := unmanaged(t, r, Options{MaxConcurrentReconciles: workers, FairnessKey: tt.give})
			var mu sync.Mutex
			queues := map[string]handler.Queue{}
			require.NoError(t, c.WatchClusters(ClusterWatch{Source: func(cl Cluster) (source.Source, error) {
				return source.Func(func(_ context.Context, q handler.Queue) error {
					mu.Lock()
					queues[cl.Name()] = q
					mu.Unlock()
					return nil
				}), nil
			}}))
			for _, n := range append([]string{"b"}, floods...) {
				require.NoError(t, c.EngageCluster(t.Context(), namedCluster(n)))
			}
			stop, _ := start(c)
			defer func() { close(tokens); assert.NoError(t, stop()) }()
			require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(queues) == 4 }, time.Minute, time.Millisecond)

			for i := range perCluster {
				for _, n := range floods {
					queues[n].Add(inCluster("", fmt.Sprintf("cm-%03d", i))) // the door stamps the cluster
				}
			}
			for range workers {
				assert.NotEqual(t, "b", (<-started).Cluster)
			}
			queues["b"].Add(inCluster("", "quiet"))
			before := workers
			for {
				tokens <- struct{}{}
				if (<-started).Cluster == "b" {
					break
				}
				before++
			}
			t.Logf("%d reconciles started before the quiet cluster's", before)
			assert.LessOrEqual(t, before, tt.wantMax)
			if tt.give == nil {
				assert.Equal(t, len(floods)*perCluster, before, "first in, first out")
			}
		})
	}
}

// TestHandlersKeepTheCluster: a map function of a cluster's source sees
// the cluster in its context; the Requests it returns get the event's
// cluster unless they name another one.
func TestHandlersKeepTheCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &requests{}
		c := unmanaged(t, rec, Options{})
		ch := make(chan handler.GenericEvent, 1)
		mapper := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{
				inCluster("", "same-"+reconcile.ClusterFromContext(ctx)),
				inCluster("hub", "named"),
			}
		})
		require.NoError(t, c.WatchClusters(ClusterWatch{Matches: func(n string) bool { return n == "east" },
			Source: func(Cluster) (source.Source, error) { return source.Channel(ch, mapper), nil }}))
		require.NoError(t, c.EngageCluster(t.Context(), namedCluster("east")))
		stop, _ := start(c)
		ch <- event("x")
		synctest.Wait()
		assert.Equal(t, []reconcile.Request{inCluster("east", "same-east")}, rec.seen(),
			"a Request naming a cluster the controller is not engaged with is dropped")
		require.NoError(t, c.EngageCluster(t.Context(), namedCluster("hub")), "engaged without a source of its own")
		ch <- event("x")
		synctest.Wait()
		assert.ElementsMatch(t, []reconcile.Request{inCluster("east", "same-east"), inCluster("east", "same-east"), inCluster("hub", "named")}, rec.seen())
		require.NoError(t, stop())
	})
}
