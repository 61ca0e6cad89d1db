package workqueue

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withLock runs f holding q's lock, and lets go of it even when f fails
// the test (a deferred ShutDown takes the lock).
func withLock[K comparable](q *Queue[K], f func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	f()
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
	withLock(q, func() {
		assert.Equal(t, 60, q.idle)
		assert.Equal(t, 100, q.index.n, "Done deleted nothing")
		require.NoError(t, q.checkLocked())
	})

	q.Done("k3") // retired: a no-op
	assert.Equal(t, 40, q.Len())
	q.Add("k3") // revived
	q.Add("k3")
	assert.Equal(t, 41, q.Len())
	withLock(q, func() {
		assert.Equal(t, 59, q.idle)
		require.NoError(t, q.checkLocked())
	})

	// A new key, with over a quarter of the index idle, drops the idle.
	q.Add("new")
	withLock(q, func() {
		assert.Zero(t, q.idle)
		assert.Equal(t, 42, q.index.n)
		require.NoError(t, q.checkLocked())
	})

	var got []string
	for q.Len() > 0 {
		k, _ := q.Get()
		got = append(got, k)
		q.Done(k)
	}
	assert.Len(t, got, 42)
	assert.Equal(t, []string{"k3", "new"}, got[40:], "revived keys queue as new ones")
	withLock(q, func() {
		assert.Zero(t, q.idle, "empty: nothing left idle")
		assert.Zero(t, q.index.n)
	})
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
	withLock(q, func() {
		assert.Equal(t, 0, q.inflight)
		assert.Equal(t, none, q.proc.head)
		assert.Equal(t, n/2, q.idle)
		require.NoError(t, q.checkLocked())
	})
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
		withLock(q, func() {
			require.LessOrEqual(t, q.index.n, (4*live)/3+2, "after %d", i)
		})
	}
	withLock(q, func() {
		require.NoError(t, q.checkLocked())
	})
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
	withLock(q, func() {
		assert.Zero(t, q.idle)
		assert.Equal(t, map[string]int32{b: q.slotOf(b)}, q.indexMap())
	})
	q.Done(b)
	withLock(q, func() {
		assert.Zero(t, q.index.n)
	})
}

// TestRetireAgainstModel runs random Adds, Gets and Dones over a small
// key space and over one large enough to shrink, checks the queue against
// a model of pending and in-flight keys after every step (and all of its
// invariants now and then), then drains it.
func TestRetireAgainstModel(t *testing.T) {
	for _, keys := range []int{20, 3 * shrinkAbove} {
		t.Run(fmt.Sprint("keys=", keys), func(t *testing.T) {
			q := New(Options[string]{Metrics: nopProvider{}})
			defer q.ShutDown()
			r := rand.New(rand.NewPCG(uint64(keys), 21))
			pending := map[string]bool{}  // ready, or dirty (added while in flight)
			inFlight := map[string]bool{} // handed out, not Done
			var flying []string
			ready, live := 0, 0 // pending and not in flight; pending or in flight
			get := func() {
				k, _ := q.Get()
				require.True(t, pending[k], "%s was not pending", k)
				require.False(t, inFlight[k], "%s handed out twice", k)
				delete(pending, k)
				inFlight[k] = true
				flying = append(flying, k)
				ready--
			}
			done := func(i int) {
				k := flying[i]
				flying = append(flying[:i], flying[i+1:]...)
				delete(inFlight, k)
				q.Done(k)
				if pending[k] {
					ready++
				} else {
					live--
				}
			}
			check := func(step int) {
				require.Equal(t, ready, q.Len(), "step %d", step)
				q.mu.Lock()
				defer q.mu.Unlock()
				require.Equal(t, len(inFlight), q.inflight, "step %d", step)
				require.Equal(t, live+q.idle, q.index.n, "step %d", step)
				if keys < 100 || step%97 == 0 {
					require.NoError(t, q.checkLocked())
				}
			}
			for step := range max(4*keys, 5000) {
				switch op := r.IntN(10); {
				case op < 5:
					k := fmt.Sprint("k", r.IntN(keys))
					q.Add(k)
					if !pending[k] {
						pending[k] = true
						if !inFlight[k] {
							ready++
							live++
						}
					}
				case op < 8 && ready > 0:
					get()
				case len(flying) > 0:
					done(r.IntN(len(flying)))
				}
				check(step)
			}
			for len(flying) > 0 || ready > 0 {
				if ready > 0 {
					get()
				}
				done(0)
			}
			check(-1)
			require.NoError(t, q.check())
			withLock(q, func() {
				assert.Zero(t, q.index.n)
				assert.Zero(t, q.idle)
				if keys > shrinkAbove {
					assert.Zero(t, q.slots, "shrunk once empty")
				}
			})
		})
	}
}
