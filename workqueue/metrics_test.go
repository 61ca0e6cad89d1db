package workqueue_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kubeloop/kubeloop/workqueue"
)

func TestMetricsAdapter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &fakeMetrics{}
		q := workqueue.New(workqueue.Options[req]{Name: "things", Metrics: workqueue.NewMetricsAdapter(m)})
		assert.Equal(t, "things", m.name)

		q.Add(r("a"))
		q.Add(r("a")) // duplicate: not an add
		q.Add(r("b"))
		q.AddAfter(r("c"), time.Second)
		assert.Zero(t, m.snapshot().adds, "forwarded every AdapterPeriod, not at once")
		time.Sleep(workqueue.AdapterPeriod)
		synctest.Wait()
		s := m.snapshot()
		assert.Equal(t, int64(2), s.adds)
		assert.Equal(t, int64(1), s.retries)
		assert.Equal(t, int64(2), s.depth)

		time.Sleep(500 * time.Millisecond) // c becomes ready at 1s
		synctest.Wait()
		k, _ := q.Get() // a waited 1s
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		s = m.snapshot()
		assert.Equal(t, int64(3), s.adds)
		assert.Equal(t, int64(1), s.retries)
		assert.Equal(t, int64(2), s.depth)
		assert.Equal(t, []float64{1}, s.latency)
		assert.InDelta(t, 1.5, s.unfinished, 1e-9)
		assert.InDelta(t, 1.5, s.longest, 1e-9)

		k2, _ := q.Get() // b waited 2.5s
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		s = m.snapshot()
		assert.InDelta(t, 2.5, s.unfinished, 1e-9, "2s + 0.5s")
		assert.InDelta(t, 2, s.longest, 1e-9)

		q.Add(k)   // in flight: an add, in depth, ready again at Done
		q.Done(k)  // worked 2s
		q.Done(k2) // worked 0.5s
		assert.Equal(t, []string{"c", "a"}, drain(t, q), "c waited 2s, a 0s; both worked 0s")
		time.Sleep(workqueue.AdapterPeriod)
		synctest.Wait()
		s = m.snapshot()
		assert.Equal(t, int64(4), s.adds)
		assert.Equal(t, []float64{1, 2.5, 0, 2}, s.latency, "per update, by bucket")
		assert.Equal(t, []float64{0, 0, 0.5, 2}, s.work)

		q.Add(r("d"))
		q.ShutDown() // nothing in flight: final, with a last update, at once
		s = m.snapshot()
		assert.Equal(t, int64(5), s.adds)
		assert.Equal(t, int64(0), s.depth, "dropped keys leave the depth")
		assert.Equal(t, int64(0), s.minDepth, "never negative")
		assert.Zero(t, s.unfinished)
		assert.Zero(t, s.longest)
	})
}

func TestMetricsAdapterTellsTheMeanOfABucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &fakeMetrics{}
		q := workqueue.New(workqueue.Options[req]{Metrics: workqueue.NewMetricsAdapter(m)})
		defer q.ShutDown()
		q.Add(r("a"))
		time.Sleep(time.Second)
		q.Add(r("b"))
		time.Sleep(2 * time.Second)
		synctest.Wait()
		a, _ := q.Get() // waited 3s
		b, _ := q.Get() // waited 2s
		q.Done(a)
		q.Done(b)
		time.Sleep(workqueue.AdapterPeriod)
		synctest.Wait()
		assert.Equal(t, []float64{2.5, 2.5}, m.snapshot().latency,
			"3s and 2s share the bucket (1s, 10s]: the count and the sum are exact")
	})
}

func TestMetricsAdapterHandoffToParkedWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &fakeMetrics{}
		q := workqueue.New(workqueue.Options[req]{Metrics: workqueue.NewMetricsAdapter(m)})
		assert.Equal(t, "unnamed", m.name)
		ch := asyncGet(q)
		synctest.Wait()
		q.Add(r("a"))
		g := <-ch
		time.Sleep(time.Second)
		q.Done(g.key)
		q.ShutDown()
		s := m.snapshot()
		assert.Equal(t, []float64{0}, s.latency)
		assert.Equal(t, []float64{1}, s.work)
		assert.Equal(t, int64(0), s.depth)
		assert.Equal(t, int64(1), s.adds)
	})
}

func TestMetricsAdapterStopsAfterTheLastDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &fakeMetrics{}
		q := workqueue.New(workqueue.Options[req]{Metrics: workqueue.NewMetricsAdapter(m)})
		q.Add(r("a"))
		k, _ := q.Get()
		q.ShutDown()
		time.Sleep(time.Second)
		synctest.Wait()
		assert.InDelta(t, 1, m.snapshot().unfinished, 1e-9, "still fed while a key is in flight")
		q.Done(k) // final: the adapter's goroutine exits (synctest.Test fails otherwise)
		s := m.snapshot()
		assert.Equal(t, []float64{1}, s.work)
		assert.Zero(t, s.unfinished)
	})
}

// promLike is a provider whose depth gauge can be Set and whose counters
// can Add, as Prometheus metrics can.
type promLike struct {
	*fakeMetrics
	set  []float64
	adds []float64
}

type settableGauge struct {
	gauge
	p *promLike
}

func (g settableGauge) Set(v float64) { g.p.set = append(g.p.set, v) }

type addCounter struct {
	fn
	p *promLike
}

func (c addCounter) Add(v float64) { c.p.adds = append(c.p.adds, v) }

func (p *promLike) NewDepthMetric(name string) workqueue.GaugeMetric {
	return settableGauge{gauge{p.fakeMetrics}, p}
}

func (p *promLike) NewAddsMetric(name string) workqueue.CounterMetric {
	return addCounter{p.fakeMetrics.NewAddsMetric(name).(fn), p}
}

func TestMetricsAdapterSetsGaugesAndAddsCounters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &promLike{fakeMetrics: &fakeMetrics{}}
		q := workqueue.New(workqueue.Options[req]{Metrics: workqueue.NewMetricsAdapter(p)})
		q.Add(r("a"))
		q.Add(r("b"))
		q.Add(r("c"))
		time.Sleep(workqueue.AdapterPeriod)
		synctest.Wait()
		time.Sleep(workqueue.AdapterPeriod) // nothing new to add
		synctest.Wait()
		k, _ := q.Get()
		q.Done(k)
		q.ShutDown()
		assert.Equal(t, []float64{3, 3, 0}, p.set, "depth set at every update")
		assert.Equal(t, []float64{3}, p.adds, "one Add of the new count")
		s := p.snapshot()
		assert.Zero(t, s.depth, "Inc and Dec unused")
		assert.Zero(t, s.adds, "Inc unused")
	})
}
