package workqueue_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kubeloop/kubeloop/workqueue"
)

// TestStress runs producers and workers doing random adds, delayed adds,
// rate-limited adds, priorities and Done, and checks that no key is ever
// processed twice at once, that no add is lost, and that shutdown returns.
func TestStress(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { stress(t, seed) })
	}
}

func stress(t *testing.T, seed uint64) {
	const (
		producers = 8
		workers   = 8
		keys      = 200
		ops       = 2000
	)
	m := &fakeStats{}
	q := workqueue.New(workqueue.Options[req]{
		Metrics:     m,
		RateLimiter: workqueue.NewItemExponentialFailureRateLimiter[req](100*time.Microsecond, 2*time.Millisecond),
		AgeAfter:    time.Millisecond,
		FairnessKey: func(k req) string { return k.Namespace },
	})
	var (
		seq       atomic.Int64
		inFlight  [keys]atomic.Int32
		lastAdd   [keys]atomic.Int64
		lastStart [keys]atomic.Int64
		overlaps  atomic.Int64
		processed atomic.Int64
	)
	key := func(i int) req { return req{Namespace: fmt.Sprint("ns", i%7), Name: fmt.Sprint(i)} }
	index := func(k req) int {
		var i int
		fmt.Sscan(k.Name, &i)
		return i
	}

	var wg sync.WaitGroup
	for w := range workers {
		rnd := rand.New(rand.NewPCG(seed, uint64(w)))
		wg.Go(func() {
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				i := index(k)
				lastStart[i].Store(seq.Add(1))
				if inFlight[i].Add(1) != 1 {
					overlaps.Add(1)
				}
				if rnd.IntN(4) == 0 {
					time.Sleep(time.Duration(rnd.IntN(200)) * time.Microsecond)
				}
				inFlight[i].Add(-1)
				processed.Add(1)
				if rnd.IntN(2) == 0 {
					q.Forget(k)
				}
				q.Done(k)
			}
		})
	}

	// A reader samples the Stats while the queue runs, as a scrape would.
	minDepth := 0
	sampled := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		var st workqueue.Stats
		for {
			select {
			case <-stopSampling:
				return
			default:
			}
			m.read(&st)
			minDepth = min(minDepth, st.Depth)
			time.Sleep(100 * time.Microsecond)
		}
	}()

	var pg sync.WaitGroup
	for p := range producers {
		rnd := rand.New(rand.NewPCG(seed, 100+uint64(p)))
		pg.Go(func() {
			for range ops {
				i := rnd.IntN(keys)
				k := key(i)
				lastAdd[i].Store(seq.Add(1))
				switch rnd.IntN(5) {
				case 0:
					q.Add(k)
				case 1:
					q.AddAfter(k, time.Duration(rnd.IntN(2000))*time.Microsecond)
				case 2:
					q.AddRateLimited(k)
				case 3:
					q.AddWithOpts(workqueue.AddOpts{Priority: rnd.IntN(3) - 1}, k, key(rnd.IntN(keys)))
				default:
					q.AddWithOpts(workqueue.AddOpts{Priority: workqueue.LowPriority, After: time.Duration(rnd.IntN(1000)) * time.Microsecond}, k)
				}
			}
		})
	}
	pg.Wait()

	// Every key added must start processing after its last add.
	lost := func() []int {
		var l []int
		for i := range keys {
			if a := lastAdd[i].Load(); a != 0 && lastStart[i].Load() < a {
				l = append(l, i)
			}
		}
		return l
	}
	assert.Eventually(t, func() bool { return len(lost()) == 0 }, 10*time.Second, time.Millisecond,
		"keys never processed after their last add")

	if seed%2 == 0 {
		q.ShutDown()
	} else {
		q.ShutDownWithDrain()
	}
	wg.Wait()
	close(stopSampling)
	<-sampled
	assert.Zero(t, overlaps.Load(), "a key was processed by two workers at once")
	assert.Positive(t, processed.Load())
	s := m.stats()
	assert.Zero(t, s.Depth)
	assert.Zero(t, minDepth, "depth never negative")
	assert.Equal(t, 1, m.finalCalls())
	assert.Equal(t, uint64(processed.Load()), s.WorkDuration.Count(), "one work duration per key processed")
}
