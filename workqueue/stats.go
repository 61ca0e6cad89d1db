package workqueue

import (
	"math"
	"time"
)

// StatsProvider is a MetricsProvider that reads a queue's metrics when it
// collects them instead of being told of every change. New detects it: the
// queue then keeps its counts and histograms in plain fields under the
// lock it already holds at every transition, so recording costs no atomic
// operation and no call into the provider, and it runs no goroutine of its
// own. The MetricsProvider methods are not called for such a queue.
type StatsProvider interface {
	MetricsProvider
	// HistogramBuckets returns the upper bounds, in seconds and in
	// increasing order, of the latency and work duration histograms. An
	// observation v counts in the first bucket whose bound b has v <= b.
	HistogramBuckets() []float64
	// RegisterQueue is called once by New with the queue's Name and a
	// function that fills in the queue's current Stats. read is safe for
	// concurrent use and takes the queue's lock briefly. RegisterQueue
	// returns a function that the queue calls once, outside its lock, when
	// its Stats can no longer change (it is shut down and no key is in
	// flight); the provider may then read the Stats one last time and let
	// go of read.
	RegisterQueue(name string, read func(*Stats)) (final func())
}

// Stats is a snapshot of one queue's metrics, with the meanings given in
// MetricsProvider.
type Stats struct {
	// Depth is the number of keys ready to be handed out or added while
	// being processed.
	Depth int
	// Adds counts the adds that made a key ready or dirty.
	Adds uint64
	// Retries counts the delayed and rate-limited adds.
	Retries uint64
	// Latency holds the seconds keys waited between becoming ready and
	// being handed out by Get.
	Latency Histogram
	// WorkDuration holds the seconds between Get and Done.
	WorkDuration Histogram
	// UnfinishedWorkSeconds is the seconds of work in flight, summed over
	// the keys handed out and not yet Done.
	UnfinishedWorkSeconds float64
	// LongestRunningProcessorSeconds is the seconds the oldest key in
	// flight has been processed.
	LongestRunningProcessorSeconds float64
}

// Histogram is a snapshot of a histogram over the provider's
// HistogramBuckets.
type Histogram struct {
	// Counts[i] is the number of observations in bucket i (not cumulative);
	// the last element, at index len(HistogramBuckets()), counts those
	// above every bound.
	Counts []uint64
	// Sum is the sum of the observations in seconds.
	Sum float64
}

// histogram counts durations in nanoseconds against bounds converted once
// from seconds; it is guarded by the queue's mutex.
type histogram struct {
	bounds []int64  // inclusive upper bounds in nanoseconds
	counts []uint64 // len(bounds)+1
	sumNs  int64    // nanoseconds not yet in sum
	sum    float64  // seconds
}

func newHistogram(bounds []float64) histogram {
	h := histogram{bounds: make([]int64, len(bounds)), counts: make([]uint64, len(bounds)+1)}
	for i, b := range bounds {
		h.bounds[i] = boundNanos(b)
	}
	return h
}

// boundNanos returns the largest n such that time.Duration(n).Seconds() <= b,
// so that a duration falls in the same bucket as its value in seconds.
func boundNanos(b float64) int64 {
	switch {
	case math.IsNaN(b) || b < math.MinInt64/1e9:
		return math.MinInt64
	case b >= math.MaxInt64/1e9:
		return math.MaxInt64
	}
	n := int64(math.Floor(b * 1e9))
	for n < math.MaxInt64 && time.Duration(n+1).Seconds() <= b {
		n++
	}
	for n > math.MinInt64 && time.Duration(n).Seconds() > b {
		n--
	}
	return n
}

// observe records a duration of ns nanoseconds.
func (h *histogram) observe(ns int64) {
	i := 0
	for i < len(h.bounds) && ns > h.bounds[i] {
		i++
	}
	h.counts[i]++
	// Integer nanoseconds keep the float division out of the lock holder's
	// path; they move to sum long before they could overflow.
	h.sumNs += ns
	if h.sumNs > 1<<62 || h.sumNs < -1<<62 {
		h.flush()
	}
}

func (h *histogram) flush() {
	h.sum += time.Duration(h.sumNs).Seconds()
	h.sumNs = 0
}

// read copies h into dst, reusing dst's slice.
func (h *histogram) read(dst *Histogram) {
	h.flush()
	dst.Counts = append(dst.Counts[:0], h.counts...)
	dst.Sum = h.sum
}

// readStats fills s with the queue's current metrics (StatsProvider only).
func (q *Queue[K]) readStats(s *Stats) {
	q.mu.Lock()
	defer q.mu.Unlock()
	m := q.metrics
	s.Depth = m.depthN
	s.Adds, s.Retries = m.adds, m.retries
	m.latency.read(&s.Latency)
	m.work.read(&s.WorkDuration)
	s.UnfinishedWorkSeconds, s.LongestRunningProcessorSeconds = q.inflightSeconds()
}

// finalStats returns the StatsProvider's final function once the queue's
// metrics can no longer change, and nil before and after; q.mu held.
func (q *Queue[K]) finalStats() func() {
	m := q.metrics
	if m == nil || m.final == nil || !q.shutdown || q.inflight > 0 {
		return nil
	}
	f := m.final
	m.final = nil
	return f
}

// countLocked counts adds and retries of a StatsProvider; q.mu held.
func (q *Queue[K]) countLocked(adds, retries int) {
	if m := q.metrics; m != nil && m.collected {
		m.adds += uint64(adds)
		m.retries += uint64(retries)
	}
}

// counted updates a simple provider's adds and retries counters outside
// the lock.
func (q *Queue[K]) counted(added, retry bool) {
	m := q.metrics
	if m == nil || m.collected {
		return
	}
	if added {
		m.addsM.Inc()
	}
	if retry {
		m.retriesM.Inc()
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// countFired counts a delayed key that became ready; q.mu held.
func (q *Queue[K]) countFired() {
	switch m := q.metrics; {
	case m == nil:
	case m.collected:
		m.adds++
	default:
		m.addsM.Inc()
	}
}
