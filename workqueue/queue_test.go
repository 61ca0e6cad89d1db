package workqueue_test

import (
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/workqueue"
)

func TestDeduplicates(t *testing.T) {
	q := newQueue(t, workqueue.Options[req]{})
	for range 3 {
		q.Add(r("a"))
		q.Add(r("b"))
	}
	assert.Equal(t, 2, q.Len())
	assert.Equal(t, []string{"a", "b"}, drain(t, q))
	assert.Equal(t, 0, q.Len())
}

func TestAddWhileProcessingIsHeldUntilDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, workqueue.Options[req]{})
		q.Add(r("a"))
		k, _ := q.Get()
		require.Equal(t, r("a"), k)

		q.Add(r("a"))
		q.Add(r("a"))
		assert.Equal(t, 0, q.Len(), "a key in flight is not ready")
		second := asyncGet(q)
		synctest.Wait()
		select {
		case g := <-second:
			t.Fatalf("key handed to a second worker while in flight: %v", g)
		default:
		}

		q.Done(k)
		synctest.Wait()
		g := <-second
		assert.Equal(t, got{key: r("a")}, g, "re-added key handed out again after Done")
		q.Done(g.key)
		assert.Equal(t, 0, q.Len(), "collapsed into one re-run")
	})
}

func TestDoneOfUnknownKeyIsIgnored(t *testing.T) {
	q := newQueue(t, workqueue.Options[req]{})
	q.Done(r("never"))
	q.Add(r("a"))
	q.Done(r("a")) // ready, not in flight
	assert.Equal(t, 1, q.Len())
}

func TestGetBlocksUntilAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, workqueue.Options[req]{})
		ch := asyncGet(q)
		synctest.Wait()
		assert.Empty(t, ch)
		q.Add(r("a"))
		assert.Equal(t, got{key: r("a")}, <-ch)
		assert.Equal(t, 0, q.Len())
	})
}

func TestShutDownUnblocksEveryGetAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.New(workqueue.Options[req]{})
		var chans []<-chan got
		for range 5 {
			chans = append(chans, asyncGet(q))
		}
		q.AddAfter(r("later"), time.Hour)
		synctest.Wait()
		start := time.Now()
		q.ShutDown()
		synctest.Wait()
		for _, ch := range chans {
			require.Len(t, ch, 1)
			assert.True(t, (<-ch).shutdown)
		}
		assert.Zero(t, time.Since(start), "fake time did not move: no polling")
		assert.True(t, q.ShuttingDown())

		q.Add(r("a"))
		assert.Equal(t, 0, q.Len(), "adds after shutdown are ignored")
		_, shutdown := q.Get()
		assert.True(t, shutdown)
		q.ShutDown() // idempotent
	})
}

func TestShutDownDropsPendingKeys(t *testing.T) {
	q := workqueue.New(workqueue.Options[req]{})
	q.Add(r("a"))
	q.Add(r("b"))
	q.ShutDown()
	assert.Equal(t, 0, q.Len())
	_, shutdown := q.Get()
	assert.True(t, shutdown)
}

func TestShutDownWithDrainWaitsForKeysInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.New(workqueue.Options[req]{})
		q.Add(r("a"))
		q.Add(r("b"))
		k, _ := q.Get()
		returned := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(returned)
		}()
		synctest.Wait()
		assert.True(t, q.ShuttingDown())
		assert.Empty(t, returned, "drain returned while a key is in flight")
		_, shutdown := q.Get()
		assert.True(t, shutdown, "no new keys handed out while draining")

		q.Add(k) // ignored: shutting down
		q.Done(k)
		synctest.Wait()
		select {
		case <-returned:
		default:
			t.Fatal("drain did not return after the last Done")
		}
	})
}

func TestShutDownWithDrainReturnsWhenIdle(t *testing.T) {
	q := workqueue.New(workqueue.Options[req]{})
	q.Add(r("a"))
	q.ShutDownWithDrain()
	assert.True(t, q.ShuttingDown())
}

func TestKeysAreNotRetainedAfterDone(t *testing.T) {
	type big struct{ b [1 << 10]byte }
	q := workqueue.New(workqueue.Options[*big]{})
	defer q.ShutDown()
	collected := make(chan struct{})
	func() {
		k := &big{}
		runtime.AddCleanup(k, func(ch chan struct{}) { close(ch) }, collected)
		q.Add(k)
		got, _ := q.Get()
		q.Done(got)
	}()
	for range 10 {
		runtime.GC()
		select {
		case <-collected:
			return
		default:
		}
	}
	t.Fatal("key still referenced by the queue after Done")
}

func TestZeroAllocationsPerCycle(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count")
	}
	q := newQueue(t, workqueue.Options[req]{})
	keys := make([]req, 64)
	for i := range keys {
		keys[i] = r(string(rune('a'+i%26)) + string(rune('a'+i/26)))
	}
	cycle := func() {
		for _, k := range keys {
			q.Add(k)
			q.Add(k)
		}
		for range keys {
			k, _ := q.Get()
			q.Done(k)
		}
	}
	cycle() // warm up
	assert.Zero(t, testing.AllocsPerRun(50, cycle))
}

func TestConcurrentWorkersEachGetADistinctKey(t *testing.T) {
	q := newQueue(t, workqueue.Options[req]{})
	const n = 100
	for i := range n {
		q.Add(req{Namespace: "ns", Name: string(rune(i + 'A'))})
	}
	var mu sync.Mutex
	seen := map[req]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				mu.Lock()
				seen[k]++
				last := len(seen) == n
				mu.Unlock()
				q.Done(k)
				if last {
					q.ShutDown()
				}
			}
		})
	}
	wg.Wait()
	assert.Len(t, seen, n)
	for k, c := range seen {
		assert.Equal(t, 1, c, k)
	}
}
