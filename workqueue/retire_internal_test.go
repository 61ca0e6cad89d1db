package workqueue

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkIdle checks the idle list against the idle count and the flags.
func checkIdle(t *testing.T, q *Queue[string]) {
	t.Helper()
	n, prev := 0, none
	for id := q.idleHead; id != none; id = q.at(id).next {
		require.Equal(t, fIdle, q.at(id).flags)
		require.Equal(t, prev, q.at(id).prev)
		require.Equal(t, id, q.index[q.at(id).key], "a retired key stays indexed")
		prev = id
		n++
	}
	require.Equal(t, q.idle, n)
}

func TestRetiredKeysStayIndexedUntilNeeded(t *testing.T) {
	q := New(Options[string]{})
	defer q.ShutDown()
	for i := range 100 {
		q.Add(fmt.Sprint("k", i))
	}
	for range 60 {
		k, _ := q.Get()
		q.Done(k)
	}
	q.mu.Lock()
	assert.Equal(t, 60, q.idle)
	assert.Len(t, q.index, 100, "Done deleted nothing")
	checkIdle(t, q)
	q.mu.Unlock()

	q.Done("k3") // retired: a no-op
	assert.Equal(t, 40, q.Len())
	q.Add("k3") // revived
	q.Add("k3")
	assert.Equal(t, 41, q.Len())
	q.mu.Lock()
	assert.Equal(t, 59, q.idle)
	checkIdle(t, q)
	q.mu.Unlock()

	// A new key, with over a quarter of the index idle, drops the idle.
	q.Add("new")
	q.mu.Lock()
	assert.Zero(t, q.idle)
	assert.Len(t, q.index, 42)
	checkIdle(t, q)
	q.mu.Unlock()

	var got []string
	for q.Len() > 0 {
		k, _ := q.Get()
		got = append(got, k)
		q.Done(k)
	}
	assert.Len(t, got, 42)
	assert.Equal(t, []string{"k3", "new"}, got[40:], "revived keys queue as new ones")
	q.mu.Lock()
	assert.Zero(t, q.idle, "empty: nothing left idle")
	assert.Empty(t, q.index)
	q.mu.Unlock()
}

// TestDoneBeyondScan finishes more keys in flight than Done compares, in
// every order.
func TestDoneBeyondScan(t *testing.T) {
	q := New(Options[string]{Metrics: nopProvider{}})
	defer q.ShutDown()
	const n = 3 * maxInFlightScan
	for i := range n + 1 {
		q.Add(fmt.Sprint("k", i))
	}
	var held []string
	for range n {
		k, _ := q.Get()
		held = append(held, k)
	}
	q.Done("k-unknown")
	q.Done(fmt.Sprint("k", n)) // pending, not in flight: a no-op
	assert.Equal(t, 1, q.Len())
	for i := len(held) - 1; i >= 0; i -= 2 { // newest first: past the scan
		q.Done(held[i])
	}
	for i := 0; i < len(held); i += 2 {
		q.Add(held[i]) // dirty
		q.Done(held[i])
	}
	q.mu.Lock()
	assert.Equal(t, 0, q.inflight)
	assert.Equal(t, none, q.procHead)
	assert.Equal(t, n/2, q.idle)
	checkIdle(t, q)
	q.mu.Unlock()
	assert.Equal(t, 1+n/2, q.Len(), "the keys added while in flight are ready again")
}

// TestIdleIsBounded churns distinct keys through a queue that never
// empties: the index stays within 4/3 of the keys it holds.
func TestIdleIsBounded(t *testing.T) {
	q := New(Options[string]{})
	defer q.ShutDown()
	const live = 100
	for i := range live {
		q.Add(fmt.Sprint("k", i))
	}
	for i := live; i < 20*live; i++ {
		q.Add(fmt.Sprint("k", i))
		k, _ := q.Get()
		q.Done(k)
		q.mu.Lock()
		require.LessOrEqual(t, len(q.index), (4*live)/3+2, "after %d", i)
		q.mu.Unlock()
	}
	q.mu.Lock()
	checkIdle(t, q)
	q.mu.Unlock()
}

// TestShutDownWithIdle: shutting down forgets retired keys and keeps the
// ones in flight.
func TestShutDownWithIdle(t *testing.T) {
	q := New(Options[string]{})
	for _, k := range []string{"a", "b", "c"} {
		q.Add(k)
	}
	a, _ := q.Get()
	q.Done(a)
	b, _ := q.Get()
	q.ShutDown()
	q.mu.Lock()
	assert.Zero(t, q.idle)
	assert.Equal(t, map[string]int32{b: q.index[b]}, q.index)
	q.mu.Unlock()
	q.Done(b)
	q.mu.Lock()
	assert.Empty(t, q.index)
	q.mu.Unlock()
}

// TestSlabGrowsByChunks: a small queue holds a small first chunk; past
// the first chunk, slots never move as the slab grows.
func TestSlabGrowsByChunks(t *testing.T) {
	q := New(Options[string]{})
	defer q.ShutDown()
	add := func(from, to int) {
		for i := from; i < to; i++ {
			q.Add(fmt.Sprint("k", i))
		}
	}
	add(0, 10)
	q.mu.Lock()
	assert.Less(t, cap(q.chunks[0]), chunkSize)
	q.mu.Unlock()
	add(10, chunkSize)
	q.mu.Lock()
	first := q.at(0)
	q.mu.Unlock()
	const n = 3*chunkSize + 5
	add(chunkSize, n)
	q.mu.Lock()
	assert.EqualValues(t, n, q.slots)
	assert.Len(t, q.chunks, 4)
	assert.Same(t, first, q.at(0), "no slot moved")
	assert.Equal(t, "k0", first.key)
	assert.Same(t, q.at(chunkSize), &q.chunks[1][0])
	q.mu.Unlock()
	for i := range n {
		k, _ := q.Get()
		require.Equal(t, fmt.Sprint("k", i), k)
		q.Done(k)
	}
}
