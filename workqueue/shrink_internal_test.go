package workqueue

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// drainAll hands out and finishes every ready key.
func drainAll(q *Queue[string]) {
	for q.Len() > 0 {
		k, _ := q.Get()
		q.Done(k)
	}
}

func TestShrinkOnceEmpty(t *testing.T) {
	q := New(Options[string]{})
	defer q.ShutDown()
	const n = 2 * shrinkAbove
	for i := range n {
		q.Add(fmt.Sprint("k", i))
	}
	// A key in flight keeps the queue from shrinking.
	held, _ := q.Get()
	drainAll(q)
	q.mu.Lock()
	assert.EqualValues(t, n, q.slots, "not shrunk while a key is in flight")
	q.mu.Unlock()
	q.Add(held) // dirty: ready again at Done
	q.Done(held)
	k, _ := q.Get()
	require.Equal(t, held, k)
	q.Done(k)
	q.mu.Lock()
	assert.Zero(t, q.slots, "empty: the slab is let go")
	assert.Empty(t, q.chunks)
	assert.Zero(t, q.index.n)
	q.mu.Unlock()

	// The shrunk queue works as before: dedup, delays, processing.
	q.Add("a")
	q.Add("a")
	q.AddAfter("b", time.Millisecond)
	assert.Equal(t, 1, q.Len())
	k, _ = q.Get()
	assert.Equal(t, "a", k)
	q.Add("a") // while processing
	q.Done("a")
	k, _ = q.Get()
	assert.Equal(t, "a", k)
	q.Done("a")
	k, _ = q.Get() // b, once its delay passed
	assert.Equal(t, "b", k)
	q.Done("b")
	assert.Zero(t, q.Len())
}

func TestNoShrinkBelowThreshold(t *testing.T) {
	q := New(Options[string]{})
	defer q.ShutDown()
	for i := range 10 {
		q.Add(fmt.Sprint("k", i))
	}
	drainAll(q)
	q.mu.Lock()
	defer q.mu.Unlock()
	assert.EqualValues(t, 10, q.slots, "a small queue keeps its slab: no allocation per cycle")
}

// BenchmarkAfterBacklog is Add, Get and Done of one key at a time in a
// queue that once held 100k keys, as a controller's after its initial list.
func BenchmarkAfterBacklog(b *testing.B) {
	q := New(Options[string]{Metrics: nopProvider{}})
	defer q.ShutDown()
	for i := range 100000 {
		q.Add(fmt.Sprint("k", i))
	}
	drainAll(q)
	keys := make([]string, 10000)
	for i := range keys {
		keys[i] = fmt.Sprint("config-", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q.Add(keys[i%len(keys)])
		k, _ := q.Get()
		q.Done(k)
		i++
	}
}

type nopProvider struct{}

func (nopProvider) HistogramBuckets() []float64               { return []float64{0.001, 0.01, 0.1, 1} }
func (nopProvider) RegisterQueue(string, func(*Stats)) func() { return func() {} }

// TestExpectMakesRoomOnceKeysCome checks that an announcement of many
// keys is acted on only once expectAt keys have come, and that the queue
// holds, orders and de-duplicates its keys as without one.
func TestExpectMakesRoomOnceKeysCome(t *testing.T) {
	q := New(Options[string]{})
	defer q.ShutDown()
	q.Expect(100_000)
	for i := range expectAt {
		q.Add(fmt.Sprint("k", i))
	}
	q.mu.Lock()
	assert.Equal(t, 100_000, q.expected, "not acted on below expectAt keys")
	q.mu.Unlock()
	const n = 3 * expectAt
	for i := expectAt; i < n; i++ {
		q.Add(fmt.Sprint("k", i))
		q.Add(fmt.Sprint("k", i)) // de-duplicated
	}
	q.mu.Lock()
	assert.Zero(t, q.expected, "acted on once")
	assert.Equal(t, n, q.index.n)
	q.mu.Unlock()
	require.Equal(t, n, q.Len())
	for i := range n {
		k, _ := q.Get()
		require.Equal(t, fmt.Sprint("k", i), k, "first in, first out")
		q.Done(k)
	}
	assert.Zero(t, q.Len())

	// An announcement that is not followed costs nothing.
	q.Expect(100_000)
	q.Add("a")
	q.mu.Lock()
	assert.Equal(t, 1, q.index.n)
	q.mu.Unlock()
}
