package workqueue

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// nopStats is a StatsProvider that never reads.
type nopStats struct{}

func (nopStats) HistogramBuckets() []float64               { return []float64{1} }
func (nopStats) RegisterQueue(string, func(*Stats)) func() { return func() {} }

// TestHistogramBucketsMatchSeconds checks that a duration counted in
// nanoseconds lands in the bucket its value in seconds belongs to, at and
// around every bound, as a histogram observing seconds would count it.
func TestHistogramBucketsMatchSeconds(t *testing.T) {
	bounds := []float64{-1e-9, 0, 3e-9, 0.005, 0.3, 1, 2.5, 60, 1e10, math.Inf(1)}
	for i, start := 0, 10e-9; i < 12; i, start = i+1, start*10 {
		bounds = append(bounds, start) // prometheus.ExponentialBuckets(10e-9, 10, 12)
	}
	for _, b := range bounds {
		n := newHistogram([]float64{b}).bounds[0]
		if n == math.MaxInt64 || n == math.MinInt64 {
			continue // every duration is below (or above) the bound
		}
		for _, d := range []int64{n - 2, n - 1, n, n + 1, n + 2} {
			want := 1
			if time.Duration(d).Seconds() <= b {
				want = 0
			}
			h := newHistogram([]float64{b})
			h.observe(d)
			assert.Equal(t, uint64(1), h.counts[want], "bound %g, %dns", b, d)
		}
	}
}

func TestHistogramExtremeBounds(t *testing.T) {
	h := newHistogram([]float64{math.Inf(-1), math.NaN(), 1e300, math.Inf(1)})
	assert.Equal(t, []int64{math.MinInt64, math.MinInt64, math.MaxInt64, math.MaxInt64}, h.bounds)
	h.observe(math.MaxInt64)
	assert.Equal(t, []uint64{0, 0, 1, 0, 0}, h.counts)
}

func TestHistogramSum(t *testing.T) {
	h := newHistogram([]float64{1})
	h.observe(int64(1500 * time.Millisecond))
	h.observe(int64(250 * time.Millisecond))
	var got Histogram
	h.read(&got)
	assert.Equal(t, Histogram{Counts: []uint64{1, 1}, Sums: []float64{0.25, 1.5}}, got)
	assert.Equal(t, uint64(2), got.Count())
	assert.Equal(t, 1.75, got.Sum())

	h.sumNs[0] = 1 << 62
	h.observe(2) // the nanoseconds move to the float sum before they overflow
	assert.Zero(t, h.sumNs[0])
	h.read(&got)
	assert.Equal(t, []uint64{2, 1}, got.Counts)
	assert.InDelta(t, 1.75+float64(1<<62+2)/1e9, got.Sum(), 1e-6)
}

func TestAddLearnsToReadTheClockFirst(t *testing.T) {
	q := New(Options[string]{Metrics: nopStats{}})
	defer q.ShutDown()
	assert.False(t, q.clockFirst.Load())
	// A new key needs the time (it becomes ready), a duplicate does not.
	// Model: read first when at least 4 of the last 8 adds needed it.
	var window []bool
	keys := "abcdaaaaaefghhhhhhhhijklmnopqrs"
	seen := map[rune]bool{}
	for i, k := range keys {
		needed := !seen[k]
		seen[k] = true
		window = append(window, needed)
		if len(window) > 8 {
			window = window[1:]
		}
		n := 0
		for _, w := range window {
			n += b2i(w)
		}
		q.Add(string(k))
		assert.Equal(t, n >= 4, q.clockFirst.Load(), "after add %d (%c)", i, k)
	}
	assert.True(t, q.clockFirst.Load())

	off := New(Options[string]{})
	defer off.ShutDown()
	off.Add("a")
	assert.False(t, off.clockFirst.Load(), "without metrics or priorities no add needs the time")
}
