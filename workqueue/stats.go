package workqueue

import (
	"math"
	"time"
)

// StatsProvider reads the metrics of queues. New calls RegisterQueue once;
// from then on the queue keeps its counts and histograms in plain fields
// under the lock it already holds at every transition, so recording costs
// no atomic operation, no call into the provider and no goroutine, and the
// provider reads them when it collects. NewMetricsAdapter serves a
// MetricsProvider that wants to be told of every change instead.
type StatsProvider interface {
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

// Stats is a snapshot of one queue's metrics, with client-go's meanings.
type Stats struct {
	// Depth is the number of keys ready to be handed out or added while
	// being processed.
	Depth int
	// Adds counts the adds that made a key ready or dirty, including
	// delayed keys when they become ready.
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
// HistogramBuckets. Index len(HistogramBuckets()) is the bucket above
// every bound.
type Histogram struct {
	// Counts[i] is the number of observations in bucket i (not cumulative).
	Counts []uint64
	// Sums[i] is the sum of the observations in bucket i, in seconds.
	Sums []float64
}

// Count returns the number of observations.
func (h *Histogram) Count() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Sum returns the sum of the observations in seconds.
func (h *Histogram) Sum() float64 {
	var s float64
	for _, v := range h.Sums {
		s += v
	}
	return s
}

// stats is what a queue with a StatsProvider records, guarded by the
// queue's mutex; a nil *stats means no metrics.
type stats struct {
	depth         int // ready and dirty keys
	adds, retries uint64
	latency, work histogram
	final         func() // the provider's, until it is called
}

func newStats(bounds []float64) *stats {
	return &stats{latency: newHistogram(bounds), work: newHistogram(bounds)}
}

// histogram counts durations in nanoseconds against bounds converted once
// from seconds.
type histogram struct {
	bounds []int64   // inclusive upper bounds in nanoseconds
	counts []uint64  // len(bounds)+1
	sumNs  []int64   // per bucket, nanoseconds not yet in sums
	sums   []float64 // per bucket, seconds
}

func newHistogram(bounds []float64) histogram {
	n := len(bounds)
	h := histogram{bounds: make([]int64, n), counts: make([]uint64, n+1), sumNs: make([]int64, n+1), sums: make([]float64, n+1)}
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
	// path; they move to sums long before they could overflow.
	h.sumNs[i] += ns
	if h.sumNs[i] > 1<<62 || h.sumNs[i] < -1<<62 {
		h.flush(i)
	}
}

func (h *histogram) flush(i int) {
	h.sums[i] += time.Duration(h.sumNs[i]).Seconds()
	h.sumNs[i] = 0
}

// read copies h into dst, reusing dst's slices.
func (h *histogram) read(dst *Histogram) {
	for i := range h.sumNs {
		h.flush(i)
	}
	dst.Counts = append(dst.Counts[:0], h.counts...)
	dst.Sums = append(dst.Sums[:0], h.sums...)
}

// readStats fills s with the queue's current metrics.
func (q *Queue[K]) readStats(s *Stats) {
	q.mu.Lock()
	defer q.mu.Unlock()
	m := q.metrics
	s.Depth = m.depth
	s.Adds, s.Retries = m.adds, m.retries
	m.latency.read(&s.Latency)
	m.work.read(&s.WorkDuration)
	s.UnfinishedWorkSeconds, s.LongestRunningProcessorSeconds = q.inflightSeconds()
}

// inflightSeconds returns the seconds of work in flight and the seconds
// the longest running key has been processed; q.mu held. The sum of start
// times makes unfinished work O(1); the processing list is ordered by
// start time, so its head is the longest running key.
func (q *Queue[K]) inflightSeconds() (unfinished, longest float64) {
	if q.inflight == 0 {
		return 0, 0
	}
	now := q.now()
	unfinished = time.Duration(int64(q.inflight)*now - q.startedSum).Seconds()
	longest = time.Duration(now - q.at(q.proc.head).started).Seconds()
	return unfinished, longest
}

// finalStats returns the provider's final function once the queue's
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

// countLocked counts adds and retries; q.mu held.
func (q *Queue[K]) countLocked(adds, retries int) {
	if m := q.metrics; m != nil {
		m.adds += uint64(adds)
		m.retries += uint64(retries)
	}
}

// countFired counts a delayed key that became ready; q.mu held.
func (q *Queue[K]) countFired() {
	if m := q.metrics; m != nil {
		m.adds++
	}
}
