package workqueue

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// slotOf returns the slot the index names for key, or none; q.mu held.
func (q *Queue[K]) slotOf(key K) int32 {
	return lookup(&q.index, &q.slab, key, q.tagOf(key))
}

// indexMap returns the index as a map from key to slot; q.mu held.
func (q *Queue[K]) indexMap() map[K]int32 {
	m := make(map[K]int32, q.index.n)
	for _, c := range q.index.cells {
		if c != 0 {
			m[q.at(cellID(c)).key] = cellID(c)
		}
	}
	return m
}

// setSlot points key's cell at slot id (to corrupt the index in a test).
func (q *Queue[K]) setSlot(key K, id int32) {
	tag := q.tagOf(key)
	old := q.slotOf(key)
	for i, c := range q.index.cells {
		if c == cell(tag, old) {
			q.index.cells[i] = cell(tag, id)
		}
	}
}

// checkIndex returns what is wrong with the index's own invariants (see
// index.go): its size and load, each full cell reachable from its home
// without crossing an empty cell, and its tag the tag of its slot's key
// (which checkLocked then matches to the slots in use).
func (q *Queue[K]) checkIndex(bad func(string, ...any)) {
	x := &q.index
	full := 0
	for i, c := range x.cells {
		if c == 0 {
			continue
		}
		full++
		id, tag := cellID(c), uint32(c>>32)
		if id < 0 || id >= q.slots {
			bad("index: cell %d names slot %d of %d", i, id, q.slots)
			continue
		}
		if e := q.at(id); e.tag != tag || q.tagOf(e.key) != tag {
			bad("index: cell %d has tag %#x, slot %d (key %v) has %#x and hashes to %#x", i, tag, id, e.key, e.tag, q.tagOf(e.key))
		}
		mask := len(x.cells) - 1
		for j := x.home(tag); j != i; j = (j + 1) & mask {
			if x.cells[j] == 0 {
				bad("index: cell %d (slot %d) is past an empty cell %d from its home %d", i, id, j, x.home(tag))
				break
			}
		}
	}
	if full != x.n {
		bad("index: %d cells full, n is %d", full, x.n)
	}
	if len(x.cells) > 0 && (len(x.cells)&(len(x.cells)-1) != 0 || x.n*maxLoadDen > len(x.cells)*maxLoadNum) {
		bad("index: %d keys in %d cells", x.n, len(x.cells))
	}
	if len(x.cells) > 0 && int(x.shift) != 32-bitsOf(len(x.cells)) {
		bad("index: shift %d for %d cells", x.shift, len(x.cells))
	}
}

func bitsOf(n int) int {
	b := 0
	for n > 1 {
		n >>= 1
		b++
	}
	return b
}

// TestIndexAgainstMap drives the index alone with random inserts and
// removes, including keys whose tags collide (a tiny tag space forced by
// the test through many keys in a small table), and compares it with a Go
// map after each step.
func TestIndexAgainstMap(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed))
			q := New(Options[string]{})
			defer q.ShutDown()
			want := map[string]int32{}
			var keys []string
			for step := range 20000 {
				k := fmt.Sprintf("k%d", rng.IntN(3000))
				if id, ok := want[k]; ok && rng.IntN(2) == 0 {
					q.index.remove(q.at(id).tag, id)
					q.freeSlot(id)
					delete(want, k)
				} else if !ok {
					id := q.newSlot()
					tag := q.tagOf(k)
					*q.at(id) = fresh(k, tag)
					q.index.insert(tag, id)
					want[k] = id
					keys = append(keys, k)
				}
				if step%500 == 0 || step > 19900 {
					var errs []string
					q.checkIndex(func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) })
					require.Empty(t, errs, "step %d", step)
					require.Equal(t, want, q.indexMap(), "step %d", step)
				}
			}
			for _, k := range keys {
				id, ok := want[k]
				if !ok {
					id = none
				}
				require.Equal(t, id, q.slotOf(k), k)
			}
		})
	}
}

// TestIndexReserve checks that a reservation grows the table once, to a
// size that holds the announced keys within the load bound.
func TestIndexReserve(t *testing.T) {
	var x index
	x.reserve(100_000)
	require.Equal(t, 1<<18, len(x.cells)) // 100k*4/3 = 133,334 -> 2^18
	before := len(x.cells)
	for i := range 100_000 {
		x.insert(uint32(i)*2654435761, int32(i))
	}
	require.Equal(t, before, len(x.cells), "grew after reserving")
	x.reset()
	require.Zero(t, x.n)
	require.Nil(t, x.cells)
}

// FuzzIndex drives the table alone: each pair of bytes inserts a slot with
// a tag made from the first (few distinct tags, so homes collide and runs
// wrap past the end of the table) or removes one, and after each step every
// slot held must be found by probing from its home, and nothing else held.
func FuzzIndex(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 0, 2, 1, 0, 255, 3, 255, 4, 1, 1})
	f.Add([]byte{255, 0, 255, 0, 255, 0, 255, 0, 1, 0, 1, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var x index
		held := map[int32]uint32{}
		var order []int32
		next := int32(0)
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i], ops[i+1]
			if op&1 == 0 || len(order) == 0 {
				tag := uint32(arg) << 24 // top bits pick the home: 256 homes at most
				x.insert(tag, next)
				held[next] = tag
				order = append(order, next)
				next++
			} else {
				j := int(arg) % len(order)
				id := order[j]
				x.remove(held[id], id)
				delete(held, id)
				order = append(order[:j], order[j+1:]...)
			}
			if x.n != len(held) {
				t.Fatalf("step %d: n %d, holds %d", i/2, x.n, len(held))
			}
			mask := len(x.cells) - 1
			for id, tag := range held {
				found := false
				for j := x.home(tag); x.cells[j] != 0; j = (j + 1) & mask {
					if x.cells[j] == cell(tag, id) {
						found = true
						break
					}
				}
				if !found {
					t.Fatalf("step %d: slot %d (tag %#x) not reachable from its home %d", i/2, id, tag, x.home(tag))
				}
			}
			full := 0
			for _, c := range x.cells {
				if c != 0 {
					full++
					if held[cellID(c)] != uint32(c>>32) {
						t.Fatalf("step %d: cell %#x holds a slot not held", i/2, c)
					}
				}
			}
			if full != len(held) {
				t.Fatalf("step %d: %d cells full, %d held", i/2, full, len(held))
			}
		}
	})
}
