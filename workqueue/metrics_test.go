package workqueue_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kubeloop/kubeloop/workqueue"
)

func TestMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &fakeMetrics{}
		q := workqueue.New(workqueue.Options[req]{Name: "things", Metrics: m})
		assert.Equal(t, "things", m.name)

		q.Add(r("a"))
		q.Add(r("a")) // duplicate: not an add
		q.Add(r("b"))
		q.AddAfter(r("c"), time.Second)
		assert.Equal(t, int64(2), m.snapshot().depth)

		time.Sleep(time.Second) // c becomes ready
		synctest.Wait()
		k, _ := q.Get() // a waited 1s
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		s := m.snapshot()
		assert.Equal(t, int64(3), s.adds)
		assert.Equal(t, int64(1), s.retries)
		assert.Equal(t, int64(2), s.depth)
		assert.Equal(t, []float64{1}, s.latency)
		assert.InDelta(t, 1.5, s.unfinished, 1e-9, "refreshed by the 500ms ticker")
		assert.InDelta(t, 1.5, s.longest, 1e-9)

		k2, _ := q.Get()
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		s = m.snapshot()
		assert.InDelta(t, 2.5, s.unfinished, 1e-9, "2s + 0.5s")
		assert.InDelta(t, 2, s.longest, 1e-9)

		q.Add(k) // in flight: counted as an add and in depth, handed out after Done
		q.Done(k)
		q.Done(k2)
		assert.Equal(t, []float64{2, 0.5}, m.snapshot().work)
		assert.Equal(t, []string{"c", "a"}, drain(t, q))

		q.Add(r("d"))
		q.ShutDown()
		s = m.snapshot()
		assert.Equal(t, int64(0), s.depth, "dropped keys leave the depth")
		assert.Equal(t, int64(0), s.minDepth, "never negative")
		assert.Zero(t, s.unfinished)
		assert.Zero(t, s.longest)
	})
}

func TestHandoffToParkedWorkerIsMeasured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &fakeMetrics{}
		q := workqueue.New(workqueue.Options[req]{Metrics: m})
		defer q.ShutDown()
		assert.Equal(t, "unnamed", m.name)
		ch := asyncGet(q)
		synctest.Wait()
		q.Add(r("a"))
		g := <-ch
		time.Sleep(time.Second)
		synctest.Wait()
		q.Done(g.key)
		s := m.snapshot()
		assert.Equal(t, []float64{0}, s.latency)
		assert.Equal(t, []float64{1}, s.work)
		assert.Equal(t, int64(0), s.depth)
		assert.Equal(t, int64(1), s.adds)
	})
}

// settableDepth is a provider whose depth gauge can also be Set.
type settableDepth struct {
	*fakeMetrics
	set []float64
}

type settableGauge struct {
	gauge
	p *settableDepth
}

func (g settableGauge) Set(v float64) { g.p.set = append(g.p.set, v) }

func (p *settableDepth) NewDepthMetric(name string) workqueue.GaugeMetric {
	return settableGauge{gauge{p.fakeMetrics}, p}
}

func TestSettableDepthGaugeIsSetToTheCount(t *testing.T) {
	p := &settableDepth{fakeMetrics: &fakeMetrics{}}
	q := workqueue.New(workqueue.Options[req]{Metrics: p})
	q.Add(r("a"))
	q.Add(r("b"))
	q.Add(r("a"))
	k, _ := q.Get()
	q.Add(k) // dirty
	q.Done(k)
	q.ShutDown()
	assert.Equal(t, []float64{1, 2, 1, 2, 1, 0}, p.set)
	assert.Zero(t, p.snapshot().depth, "Inc and Dec unused")
}
