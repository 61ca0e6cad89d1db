package workqueue_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/workqueue"
)

// fakeStats is a StatsProvider that keeps the reader New registers.
type fakeStats struct {
	mu     sync.Mutex
	name   string
	read   func(*workqueue.Stats)
	finals int
}

var _ workqueue.StatsProvider = (*fakeStats)(nil)

func (f *fakeStats) HistogramBuckets() []float64 { return []float64{0.5, 1, 2} }

func (f *fakeStats) RegisterQueue(name string, read func(*workqueue.Stats)) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.name, f.read = name, read
	return func() {
		f.mu.Lock()
		f.finals++
		f.mu.Unlock()
	}
}

func (f *fakeStats) stats() workqueue.Stats {
	var s workqueue.Stats
	f.read(&s)
	return s
}

func (f *fakeStats) finalCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.finals
}

func TestStatsProvider(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakeStats{}
		q := workqueue.New(workqueue.Options[req]{Name: "things", Metrics: p})
		require.Equal(t, "things", p.name)

		q.Add(r("a"))
		q.Add(r("a")) // duplicate: not an add
		q.Add(r("b"))
		q.AddAfter(r("c"), time.Second)
		s := p.stats()
		assert.Equal(t, 2, s.Depth)
		assert.Equal(t, uint64(2), s.Adds)
		assert.Equal(t, uint64(1), s.Retries)

		time.Sleep(time.Second) // c becomes ready: an add
		synctest.Wait()
		k, _ := q.Get() // a waited 1s
		time.Sleep(1500 * time.Millisecond)
		s = p.stats()
		assert.Equal(t, uint64(3), s.Adds)
		assert.Equal(t, 2, s.Depth)
		assert.InDelta(t, 1.5, s.UnfinishedWorkSeconds, 1e-9, "exact when read, no ticker")
		assert.InDelta(t, 1.5, s.LongestRunningProcessorSeconds, 1e-9)

		k2, _ := q.Get() // b waited 2.5s
		time.Sleep(500 * time.Millisecond)
		s = p.stats()
		assert.InDelta(t, 2.5, s.UnfinishedWorkSeconds, 1e-9, "2s + 0.5s")
		assert.InDelta(t, 2, s.LongestRunningProcessorSeconds, 1e-9)

		q.Add(k)   // in flight: an add, in depth, ready again at Done
		q.Done(k)  // worked 2s
		q.Done(k2) // worked 0.5s
		assert.Equal(t, []string{"c", "a"}, drain(t, q), "c waited 2s, a 0s; both worked 0s")

		s = p.stats()
		assert.Equal(t, workqueue.Stats{
			Adds:    4,
			Retries: 1,
			// Buckets: <=0.5, <=1, <=2, above.
			Latency:      workqueue.Histogram{Counts: []uint64{1, 1, 1, 1}, Sums: []float64{0, 1, 2, 2.5}},
			WorkDuration: workqueue.Histogram{Counts: []uint64{3, 0, 1, 0}, Sums: []float64{0.5, 0, 2, 0}},
		}, s)

		q.Add(r("d"))
		k3, _ := q.Get()
		q.Add(r("e"))
		q.ShutDown()
		assert.Zero(t, p.stats().Depth, "dropped keys leave the depth")
		assert.Zero(t, p.finalCalls(), "a key is in flight: stats may still change")
		time.Sleep(time.Second)
		assert.InDelta(t, 1, p.stats().UnfinishedWorkSeconds, 1e-9)
		q.Done(k3)
		assert.Equal(t, 1, p.finalCalls(), "final once the last key in flight is done")
		q.ShutDown()
		q.Done(k3)
		s = p.stats()
		assert.Equal(t, 1, p.finalCalls(), "exactly once")
		assert.Equal(t, uint64(6), s.Adds, "d and e")
		assert.Equal(t, []uint64{3, 1, 1, 0}, s.WorkDuration.Counts, "d worked 1s")
		assert.Zero(t, s.UnfinishedWorkSeconds)
		assert.Zero(t, s.LongestRunningProcessorSeconds)
	})
}

func TestStatsProviderFinalAtShutDown(t *testing.T) {
	tests := []struct {
		name string
		give func(q *workqueue.Queue[req])
	}{
		{name: "ShutDown", give: (*workqueue.Queue[req]).ShutDown},
		{name: "ShutDownWithDrain", give: (*workqueue.Queue[req]).ShutDownWithDrain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakeStats{}
			q := workqueue.New(workqueue.Options[req]{Metrics: p})
			assert.Equal(t, "unnamed", p.name)
			q.Add(r("a"))
			assert.Zero(t, p.finalCalls())
			tt.give(q)
			assert.Equal(t, 1, p.finalCalls(), "nothing in flight: final at once")
			tt.give(q)
			assert.Equal(t, 1, p.finalCalls())
		})
	}
}

func TestStatsProviderHandoffToParkedWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakeStats{}
		q := workqueue.New(workqueue.Options[req]{Metrics: p})
		defer q.ShutDown()
		ch := asyncGet(q)
		synctest.Wait()
		q.Add(r("a"))
		g := <-ch
		time.Sleep(time.Second)
		q.Done(g.key)
		s := p.stats()
		assert.Equal(t, workqueue.Histogram{Counts: []uint64{1, 0, 0, 0}, Sums: []float64{0, 0, 0, 0}}, s.Latency)
		assert.Equal(t, workqueue.Histogram{Counts: []uint64{0, 1, 0, 0}, Sums: []float64{0, 1, 0, 0}}, s.WorkDuration)
		assert.Zero(t, s.Depth)
		assert.Equal(t, uint64(1), s.Adds)
	})
}

func TestStatsProviderAddWithOpts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakeStats{}
		q := workqueue.New(workqueue.Options[req]{Metrics: p, RateLimiter: &countingLimiter{d: time.Second}})
		defer q.ShutDown()
		q.AddWithOpts(workqueue.AddOpts{Priority: 1}, r("a"), r("b"), r("a"))
		q.AddWithOpts(workqueue.AddOpts{After: time.Second}, r("c"), r("d"))
		q.AddWithOpts(workqueue.AddOpts{RateLimited: true}, r("e"))
		q.AddRateLimited(r("f"))
		s := p.stats()
		assert.Equal(t, uint64(2), s.Adds, "a and b; the delayed keys count when ready")
		assert.Equal(t, uint64(4), s.Retries, "c, d, e, f")
		time.Sleep(time.Second)
		synctest.Wait()
		s = p.stats()
		assert.Equal(t, uint64(6), s.Adds)
		assert.Equal(t, 6, s.Depth)
	})
}
