package workqueue_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/workqueue"
)

// req has the shape of reconcile.Request.
type req struct{ Namespace, Name string }

func r(name string) req { return req{Namespace: "ns", Name: name} }

// newQueue returns a queue shut down when the test ends.
func newQueue(t *testing.T, opts workqueue.Options[req]) *workqueue.Queue[req] {
	t.Helper()
	q := workqueue.New(opts)
	t.Cleanup(q.ShutDown)
	return q
}

// drain gets every ready key without blocking, marking each Done.
func drain(t *testing.T, q *workqueue.Queue[req]) []string {
	t.Helper()
	var got []string
	for q.Len() > 0 {
		k, shutdown := q.Get()
		require.False(t, shutdown)
		got = append(got, k.Name)
		q.Done(k)
	}
	return got
}

// asyncGet calls Get in a goroutine; the result arrives on the channel.
func asyncGet(q *workqueue.Queue[req]) <-chan got {
	ch := make(chan got, 1)
	go func() {
		k, s := q.Get()
		ch <- got{k, s}
	}()
	return ch
}

type got struct {
	key      req
	shutdown bool
}

// fakeMetrics records every metric in memory.
type fakeMetrics struct {
	mu         sync.Mutex
	name       string
	depth      int64
	minDepth   int64
	adds       int64
	retries    int64
	latency    []float64
	work       []float64
	unfinished float64
	longest    float64
}

var _ workqueue.MetricsProvider = (*fakeMetrics)(nil)

type fn func()

func (f fn) Inc() { f() }

type gauge struct{ m *fakeMetrics }

func (g gauge) Inc() { g.m.mu.Lock(); g.m.depth++; g.m.mu.Unlock() }
func (g gauge) Dec() {
	g.m.mu.Lock()
	g.m.depth--
	g.m.minDepth = min(g.m.minDepth, g.m.depth)
	g.m.mu.Unlock()
}

type hist struct {
	m *fakeMetrics
	p *[]float64
}

func (h hist) Observe(v float64) { h.m.mu.Lock(); *h.p = append(*h.p, v); h.m.mu.Unlock() }

type setter struct {
	m *fakeMetrics
	p *float64
}

func (s setter) Set(v float64) { s.m.mu.Lock(); *s.p = v; s.m.mu.Unlock() }

func (m *fakeMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	m.name = name
	return gauge{m}
}
func (m *fakeMetrics) NewAddsMetric(string) workqueue.CounterMetric {
	return fn(func() { m.mu.Lock(); m.adds++; m.mu.Unlock() })
}
func (m *fakeMetrics) NewLatencyMetric(string) workqueue.HistogramMetric { return hist{m, &m.latency} }
func (m *fakeMetrics) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return hist{m, &m.work}
}
func (m *fakeMetrics) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return setter{m, &m.unfinished}
}
func (m *fakeMetrics) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return setter{m, &m.longest}
}
func (m *fakeMetrics) NewRetriesMetric(string) workqueue.CounterMetric {
	return fn(func() { m.mu.Lock(); m.retries++; m.mu.Unlock() })
}

func (m *fakeMetrics) snapshot() fakeMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fakeMetrics{
		name: m.name, depth: m.depth, minDepth: m.minDepth, adds: m.adds, retries: m.retries,
		latency: append([]float64(nil), m.latency...), work: append([]float64(nil), m.work...),
		unfinished: m.unfinished, longest: m.longest,
	}
}

// countingLimiter returns a fixed delay and counts calls.
type countingLimiter struct {
	d     time.Duration
	when  atomic.Int64
	reset atomic.Int64
}

func (c *countingLimiter) When(req) time.Duration { c.when.Add(1); return c.d }
func (c *countingLimiter) Forget(req)             { c.reset.Add(1) }
func (c *countingLimiter) NumRequeues(req) int    { return int(c.when.Load()) }
