package workqueue

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slotKeys returns the keys of list l by chain c, first to last.
func slotKeys(s *slab[string], l list, c chain) []string {
	var ks []string
	for id := l.head; id != none; id = s.next(c, id) {
		ks = append(ks, s.at(id).key)
	}
	return ks
}

// TestSlabReusesFreedSlots: newSlot hands out new slots in order, then the
// freed ones, most recently freed first, zeroed; dropAll forgets them all.
func TestSlabReusesFreedSlots(t *testing.T) {
	s := slab[string]{free: none}
	for i := range 3 {
		id := s.newSlot()
		require.EqualValues(t, i, id)
		s.at(id).key = fmt.Sprint("k", i)
	}
	s.at(0).prio = 7
	s.freeSlot(0)
	s.freeSlot(2)
	assert.Equal(t, entry[string]{links: [chains]link{{next: 0}}}, *s.at(2), "zero but for the free chain")
	assert.EqualValues(t, 2, s.newSlot(), "the last freed first")
	assert.EqualValues(t, 0, s.newSlot())
	assert.Equal(t, entry[string]{links: [chains]link{{next: none}}}, *s.at(0), "no priority left over")
	assert.EqualValues(t, 3, s.newSlot(), "none free: a new slot")
	assert.EqualValues(t, 4, s.slots)

	s.dropAll()
	assert.Zero(t, s.slots)
	assert.Nil(t, s.chunks)
	assert.EqualValues(t, 0, s.newSlot(), "empty again")
}

// TestSlabLists: a slot is on one list of each chain at once; pushBack
// appends and unlink removes from the head, the middle and the tail.
func TestSlabLists(t *testing.T) {
	s := slab[string]{free: none}
	for i := range 4 {
		id := s.newSlot()
		*s.at(id) = fresh(fmt.Sprint("k", i), 0)
	}
	arrival, group := emptyList, emptyList
	for id := range int32(4) {
		s.pushBack(&arrival, byArrival, id)
	}
	s.pushBack(&group, byGroup, 3)
	s.pushBack(&group, byGroup, 1)
	assert.Equal(t, []string{"k0", "k1", "k2", "k3"}, slotKeys(&s, arrival, byArrival))
	assert.Equal(t, []string{"k3", "k1"}, slotKeys(&s, group, byGroup))

	s.unlink(&arrival, byArrival, 1) // middle
	assert.Equal(t, []string{"k0", "k2", "k3"}, slotKeys(&s, arrival, byArrival))
	assert.Equal(t, []string{"k3", "k1"}, slotKeys(&s, group, byGroup), "the other chain is untouched")
	assert.Equal(t, link{none, none}, s.at(1).links[byArrival])
	s.unlink(&arrival, byArrival, 0) // head
	s.unlink(&arrival, byArrival, 3) // tail
	assert.Equal(t, []string{"k2"}, slotKeys(&s, arrival, byArrival))
	assert.Equal(t, list{head: 2, tail: 2}, arrival)
	s.unlink(&group, byGroup, 1)
	s.unlink(&group, byGroup, 3)
	s.unlink(&arrival, byArrival, 2)
	assert.Equal(t, emptyList, arrival)
	assert.Equal(t, emptyList, group)
	s.pushBack(&arrival, byArrival, 1)
	assert.Equal(t, []string{"k1"}, slotKeys(&s, arrival, byArrival), "an unlinked slot can be pushed again")
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
	withLock(q, func() {
		assert.Less(t, cap(q.chunks[0]), chunkSize)
	})
	add(10, chunkSize)
	var first *entry[string]
	withLock(q, func() { first = q.at(0) })
	const n = 3*chunkSize + 5
	add(chunkSize, n)
	withLock(q, func() {
		assert.EqualValues(t, n, q.slots)
		assert.Len(t, q.chunks, 4)
		assert.Same(t, first, q.at(0), "no slot moved")
		assert.Equal(t, "k0", first.key)
		assert.Same(t, q.at(chunkSize), &q.chunks[1][0])
	})
	for i := range n {
		k, _ := q.Get()
		require.Equal(t, fmt.Sprint("k", i), k)
		q.Done(k)
	}
}
