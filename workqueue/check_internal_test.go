package workqueue

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// check walks the whole queue and returns every broken invariant it
// finds, or nil. It lives in a test file, so it costs nothing outside
// tests; the model test (model_internal_test.go) runs it after every step,
// the way etcd's raft checks its invariants after each transition. It
// takes q.mu.
//
// What it checks, from what the code maintains:
//   - slab: the chunks hold slots slots, all but the last chunk full; the
//     free list holds distinct slots, each zero but for its link, and no
//     cycle.
//   - states: a slot not free is in exactly one state: ready, waiting,
//     in flight, in flight and dirty (added while in flight), in flight
//     and waiting, or idle (retired). So no key is both waiting and
//     ready, and a dirty key is in flight.
//   - index: a bijection between the keys and the slots not free.
//   - lists: every list's prev links mirror its next links and end at its
//     tail. The keys in flight are exactly the keys on q.proc, in order of
//     their start (metrics), inflight counts them and startedSum sums
//     their starts; the idle keys are exactly q.idleKeys and q.idle counts
//     them. A slot on no list of a chain has no link of that chain.
//   - ready: buckets in q.order have strictly decreasing priorities, each
//     lists exactly the ready keys whose bucket it is and whose priority
//     it has, n counts them, nready and nonEmpty sum them; at most
//     maxIdleBuckets buckets are empty; every bucket slot is in order or
//     free, once.
//   - fairness: a ready key is in the group its FairnessKey names in its
//     bucket; each group lists exactly its keys and n counts them; a
//     bucket's round-robin ring holds each of its groups once; every
//     group slot belongs to one bucket or is free. Without a FairnessKey
//     there are no groups.
//   - delays: the heap holds exactly the waiting keys, each knows its
//     place, and it is a 4-ary min-heap on readyAt; unless shut down, the
//     timer is armed by the earliest deadline.
//   - counters: the depth metric counts the ready and dirty keys; a queue
//     with metrics or with a pending key of a priority other than 0
//     stamps enqueue times; a parked worker means no ready key.
//   - shutdown: closed mirrors shutdown; a queue shut down holds only keys
//     in flight (and those retired since, until the last is Done) and no
//     parked worker; drained is set only while keys are in flight after a
//     drain began.
//   - emptiness: a running queue with no key pending, waiting or in flight
//     holds no retired key and at most shrinkAbove slots.
func (q *Queue[K]) check() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.checkLocked()
}

// maxProblems bounds the problems check reports.
const maxProblems = 20

func (q *Queue[K]) checkLocked() error {
	var errs []error
	bad := func(format string, args ...any) {
		if len(errs) < maxProblems {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}

	// The slab and its free list.
	var made int
	for i, c := range q.chunks {
		if cap(c) > chunkSize || (i < len(q.chunks)-1 && len(c) != chunkSize) {
			bad("slab: chunk %d of %d holds %d slots (cap %d), want %d", i, len(q.chunks), len(c), cap(c), chunkSize)
		}
		made += len(c)
	}
	if made != int(q.slots) {
		bad("slab: chunks hold %d slots, slots is %d", made, q.slots)
		return errors.Join(errs...)
	}
	free := make([]bool, q.slots)
	nfree := 0
	for id := q.free; id != none; id = q.next(byArrival, id) {
		if id < 0 || id >= q.slots {
			bad("slab: free list reaches slot %d of %d", id, q.slots)
			break
		}
		if free[id] {
			bad("slab: free list reaches slot %d twice", id)
			break
		}
		free[id] = true
		nfree++
		e := *q.at(id)
		e.links[byArrival].next = 0
		if e != (entry[K]{}) {
			bad("slab: free slot %d is not zero: %+v", id, e)
		}
	}

	// Each slot in use: its state, the index, and where its state says
	// it is linked.
	var ready, dirty, waiting, processing, idle int
	live := 0 // keys pending, waiting or in flight
	prioPending := false
	for id := range q.slots {
		if free[id] {
			continue
		}
		e := q.at(id)
		switch e.flags {
		case fReady:
			ready++
		case fWaiting:
			waiting++
		case fProcessing:
			processing++
		case fProcessing | fDirty:
			processing++
			dirty++
		case fProcessing | fWaiting:
			processing++
			waiting++
		case fIdle:
			idle++
		default:
			bad("slot %d (key %v): flags %05b are no state", id, e.key, e.flags)
			continue
		}
		if e.flags != fIdle {
			live++
		}
		if got := q.slotOf(e.key); got != id {
			bad("slot %d (key %v): index has %d", id, e.key, got)
		}
		if e.flags&(fReady|fDirty|fWaiting) != 0 && e.prio != 0 {
			prioPending = true
		}
		if e.flags&fReady == 0 {
			if e.bucket != none || e.group != none {
				bad("slot %d (key %v): not ready, in bucket %d group %d", id, e.key, e.bucket, e.group)
			}
		} else if e.bucket < 0 || int(e.bucket) >= len(q.buckets) {
			bad("slot %d (key %v): ready in bucket %d of %d", id, e.key, e.bucket, len(q.buckets))
		} else if p := q.buckets[e.bucket].prio; p != e.prio {
			bad("slot %d (key %v): priority %d in the bucket of priority %d", id, e.key, e.prio, p)
		}
		if e.flags&fReady != 0 && q.fairKey != nil {
			if e.group < 0 || int(e.group) >= len(q.groups) {
				bad("slot %d (key %v): ready in group %d of %d", id, e.key, e.group, len(q.groups))
			} else if name := q.fairKey(e.key); q.groups[e.group].name != name {
				bad("slot %d (key %v): in group %q, its FairnessKey is %q", id, e.key, q.groups[e.group].name, name)
			}
		} else if e.group != none || e.links[byGroup] != (link{none, none}) {
			bad("slot %d (key %v): in no group, has group %d and links %v", id, e.key, e.group, e.links[byGroup])
		}
		if e.flags&fWaiting == 0 {
			if e.heap != none {
				bad("slot %d (key %v): not waiting, at %d in the heap", id, e.key, e.heap)
			}
		} else if e.heap < 0 || int(e.heap) >= len(q.heap) || q.heap[e.heap] != id {
			bad("slot %d (key %v): waiting, at %d in a heap of %d", id, e.key, e.heap, len(q.heap))
		}
		if e.flags == fWaiting && e.links[byArrival] != (link{none, none}) {
			bad("slot %d (key %v): only waiting, has links %v", id, e.key, e.links[byArrival])
		}
	}
	if q.index.n != int(q.slots)-nfree {
		bad("index: %d keys, %d slots in use", q.index.n, int(q.slots)-nfree)
	}
	q.checkIndex(bad)
	for k, id := range q.indexMap() {
		if id < 0 || id >= q.slots || free[id] || q.at(id).key != k {
			bad("index: key %v names slot %d (of %d; free %v)", k, id, q.slots, id >= 0 && id < q.slots && free[id])
		}
	}

	// The lists of chain byArrival other than the buckets'.
	n := q.walk(&errs, "in flight", q.proc, byArrival, func(e *entry[K]) bool { return e.flags&fProcessing != 0 })
	if n != processing || q.inflight != processing {
		bad("in flight: %d listed, inflight %d, %d slots in flight", n, q.inflight, processing)
	}
	if q.metrics != nil {
		var sum, last int64
		for i, id := 0, q.proc.head; id != none && i < n; i, id = i+1, q.next(byArrival, id) {
			s := q.at(id).started
			if i > 0 && s < last {
				bad("in flight: key %v started at %d, after one started at %d", q.at(id).key, s, last)
			}
			sum, last = sum+s, s
		}
		if sum != q.startedSum {
			bad("in flight: starts sum to %d, startedSum is %d", sum, q.startedSum)
		}
	}
	if n := q.walk(&errs, "idle", q.idleKeys, byArrival, func(e *entry[K]) bool { return e.flags == fIdle }); n != idle || q.idle != idle {
		bad("idle: %d listed, idle %d, %d slots idle", n, q.idle, idle)
	}

	// The ready buckets and their fairness groups.
	inOrder := make([]bool, len(q.buckets))
	groupOf := make([]int32, len(q.groups)) // the bucket of each group, or none
	for g := range groupOf {
		groupOf[g] = none
	}
	sum, nonEmpty, empty := 0, 0, 0
	for i, b := range q.order {
		if b < 0 || int(b) >= len(q.buckets) || inOrder[b] {
			bad("ready: order[%d] is bucket %d of %d (listed before: %v)", i, b, len(q.buckets), b >= 0 && int(b) < len(q.buckets) && inOrder[b])
			continue
		}
		inOrder[b] = true
		bk := &q.buckets[b]
		if i > 0 && q.buckets[q.order[i-1]].prio <= bk.prio {
			bad("ready: bucket of priority %d after one of %d", bk.prio, q.buckets[q.order[i-1]].prio)
		}
		name := fmt.Sprintf("bucket %d (priority %d)", b, bk.prio)
		n := q.walk(&errs, name, bk.list, byArrival, func(e *entry[K]) bool { return e.flags == fReady && e.bucket == b })
		if n != bk.n {
			bad("ready: %s lists %d keys, n is %d", name, n, bk.n)
		}
		sum += bk.n
		if bk.n > 0 {
			nonEmpty++
		} else {
			empty++
		}
		q.checkGroups(&errs, b, groupOf)
	}
	if empty > maxIdleBuckets {
		bad("ready: %d empty buckets kept, at most %d", empty, maxIdleBuckets)
	}
	if sum != ready || q.nready != ready || q.nonEmpty != nonEmpty {
		bad("ready: buckets hold %d keys, nready %d, %d slots ready; nonEmpty %d, %d buckets hold keys", sum, q.nready, ready, q.nonEmpty, nonEmpty)
	}
	for _, b := range q.freeB {
		if b < 0 || int(b) >= len(q.buckets) || inOrder[b] {
			bad("ready: free bucket %d of %d is in use or freed twice", b, len(q.buckets))
			continue
		}
		inOrder[b] = true
		if bk := &q.buckets[b]; bk.n != 0 || bk.groups != nil || bk.rr.n != 0 {
			bad("ready: free bucket %d holds %d keys and %d groups", b, bk.n, len(bk.groups))
		}
	}
	for b, ok := range inOrder {
		if !ok {
			bad("ready: bucket %d neither in order nor free", b)
		}
	}
	for _, g := range q.freeG {
		if g < 0 || int(g) >= len(q.groups) || groupOf[g] != none {
			bad("fairness: free group %d of %d is in use or freed twice", g, len(q.groups))
			continue
		}
		groupOf[g] = -2
	}
	for g, b := range groupOf {
		if b == none {
			bad("fairness: group %d neither in a bucket nor free", g)
		}
	}
	if q.fairKey == nil && len(q.groups) > 0 {
		bad("fairness: %d groups without a FairnessKey", len(q.groups))
	}

	// The delay heap and its timer.
	if len(q.heap) != waiting {
		bad("heap: %d keys, %d slots waiting", len(q.heap), waiting)
	}
	for i, id := range q.heap {
		if id < 0 || id >= q.slots || free[id] || q.at(id).flags&fWaiting == 0 || int(q.at(id).heap) != i {
			bad("heap: heap[%d] is slot %d, not waiting there", i, id)
			continue
		}
		if p := (i - 1) / 4; i > 0 && q.heap[p] >= 0 && q.heap[p] < q.slots && q.at(q.heap[p]).readyAt > q.at(id).readyAt {
			bad("heap: heap[%d] ready at %d, its parent heap[%d] at %d", i, q.at(id).readyAt, p, q.at(q.heap[p]).readyAt)
		}
	}
	if !q.shutdown && len(q.heap) > 0 && (q.timer == nil || q.armedAt == 0 || q.armedAt > q.at(q.heap[0]).readyAt) {
		bad("heap: first deadline %d, timer armed at %d (timer %v)", q.at(q.heap[0]).readyAt, q.armedAt, q.timer != nil)
	}

	// Counters, shutdown and emptiness.
	if q.metrics != nil && q.metrics.depth != ready+dirty {
		bad("metrics: depth %d, %d ready and %d dirty", q.metrics.depth, ready, dirty)
	}
	if (q.metrics != nil || prioPending) && !q.stamp {
		bad("stamp: off with metrics %v, a pending key of priority other than 0 %v", q.metrics != nil, prioPending)
	}
	if len(q.waiters) > 0 && (ready > 0 || q.shutdown) {
		bad("waiters: %d parked with %d keys ready (shut down %v)", len(q.waiters), ready, q.shutdown)
	}
	if q.closed.Load() != q.shutdown {
		bad("shutdown: closed %v, shutdown %v", q.closed.Load(), q.shutdown)
	}
	if q.shutdown && (ready+dirty+waiting > 0 || len(q.order) > 0) {
		bad("shutdown: holds %d ready, %d dirty, %d waiting keys, %d buckets", ready, dirty, waiting, len(q.order))
	}
	if q.drained != nil && (!q.shutdown || processing == 0) {
		bad("shutdown: drained set, shut down %v, %d in flight", q.shutdown, processing)
	}
	if !q.shutdown && live == 0 && (idle > 0 || q.slots > shrinkAbove) {
		bad("empty: %d idle keys, %d slots (shrink above %d)", idle, q.slots, shrinkAbove)
	}
	return errors.Join(errs...)
}

// walk follows l by chain c, checking that each slot is in range, seen
// once and satisfies member, that prev links mirror next links and that
// the list ends at its tail. It returns the number of slots listed.
func (q *Queue[K]) walk(errs *[]error, name string, l list, c chain, member func(*entry[K]) bool) int {
	bad := func(format string, args ...any) {
		if len(*errs) < maxProblems {
			*errs = append(*errs, fmt.Errorf(name+": "+format, args...))
		}
	}
	n, prev := 0, none
	for id := l.head; id != none; id = q.next(c, id) {
		if id < 0 || id >= q.slots || n > int(q.slots) {
			bad("reaches slot %d of %d after %d (a cycle?)", id, q.slots, n)
			return n
		}
		e := q.at(id)
		if !member(e) {
			bad("lists slot %d (key %v, flags %05b), not a member", id, e.key, e.flags)
		}
		if e.links[c].prev != prev {
			bad("slot %d links back to %d, follows %d", id, e.links[c].prev, prev)
		}
		prev = id
		n++
	}
	if l.tail != prev {
		bad("ends at %d, tail is %d", prev, l.tail)
	}
	return n
}

// checkGroups checks the fairness groups of bucket b and records in
// groupOf the bucket of each.
func (q *Queue[K]) checkGroups(errs *[]error, b int32, groupOf []int32) {
	bad := func(format string, args ...any) {
		if len(*errs) < maxProblems {
			*errs = append(*errs, fmt.Errorf("fairness: bucket %d: "+format, append([]any{b}, args...)...))
		}
	}
	bk := &q.buckets[b]
	sum := 0
	for name, g := range bk.groups {
		if g < 0 || int(g) >= len(q.groups) || groupOf[g] != none {
			bad("group %q is group %d of %d, in bucket %d", name, g, len(q.groups), groupOf[max(0, min(g, int32(len(groupOf)-1)))])
			continue
		}
		groupOf[g] = b
		gr := &q.groups[g]
		if gr.name != name {
			bad("group %q holds the name %q", name, gr.name)
		}
		n := q.walk(errs, fmt.Sprintf("fairness: group %q of bucket %d", name, b), gr.list, byGroup, func(e *entry[K]) bool {
			return e.flags == fReady && e.bucket == b && e.group == g
		})
		if n != gr.n {
			bad("group %q lists %d keys, n is %d", name, n, gr.n)
		}
		sum += gr.n
	}
	if q.fairKey != nil && sum != bk.n {
		bad("groups hold %d keys, the bucket %d", sum, bk.n)
	}
	if bk.rr.n != len(bk.groups) || (len(bk.rr.buf)&(len(bk.rr.buf)-1)) != 0 || bk.rr.n > len(bk.rr.buf) {
		bad("round-robin ring holds %d of %d (buffer %d), %d groups", bk.rr.n, len(bk.rr.buf), len(bk.rr.buf), len(bk.groups))
		return
	}
	seen := map[int32]bool{}
	for i := range bk.rr.n {
		g := bk.rr.buf[(bk.rr.head+i)&(len(bk.rr.buf)-1)]
		if seen[g] || g < 0 || int(g) >= len(q.groups) || bk.groups[q.groups[g].name] != g {
			bad("round-robin ring holds group %d twice or not of the bucket", g)
		}
		seen[g] = true
	}
}

// TestShutDownForgetsTheDelayOfAKeyInFlight: a key in flight and waiting
// for a delay loses the delay at ShutDown, and with it its place in the
// heap, which ShutDown empties. (Its slot kept a stale heap position.)
func TestShutDownForgetsTheDelayOfAKeyInFlight(t *testing.T) {
	q := New(Options[string]{})
	q.Add("a")
	q.Add("b")
	a, _ := q.Get()
	q.AddAfter(a, time.Hour) // in flight and waiting
	q.AddAfter("c", time.Hour)
	require.NoError(t, q.check())
	q.ShutDown()
	require.NoError(t, q.check())
	q.Done(a)
	require.NoError(t, q.check())
	withLock(q, func() { assert.Zero(t, q.index.n) })
}

// TestCheckFindsCorruption breaks one invariant at a time and expects
// check to name it.
func TestCheckFindsCorruption(t *testing.T) {
	for _, tt := range []struct {
		name  string
		give  func(q *Queue[string])
		wants string
	}{
		{"flags", func(q *Queue[string]) { q.at(q.slotOf("r1")).flags |= fWaiting }, "are no state"},
		{"bucket count", func(q *Queue[string]) { q.buckets[q.order[0]].n++ }, "lists 2 keys, n is 3"},
		{"nready", func(q *Queue[string]) { q.nready-- }, "nready 1"},
		{"priority", func(q *Queue[string]) { q.at(q.slotOf("r1")).prio = 7 }, "priority 7 in the bucket of priority 0"},
		{"back link", func(q *Queue[string]) { q.at(q.slotOf("r2")).links[byArrival].prev = none }, "links back to -1"},
		{"cycle", func(q *Queue[string]) { q.at(q.slotOf("r2")).links[byArrival].next = q.slotOf("r1") }, "a cycle?"},
		{"index", func(q *Queue[string]) { q.setSlot("r1", q.slotOf("r2")) }, "index has"},
		{"in flight", func(q *Queue[string]) { q.inflight++ }, "inflight 2"},
		{"idle", func(q *Queue[string]) { q.idle++ }, "idle 2"},
		{"heap place", func(q *Queue[string]) { q.at(q.slotOf("w1")).heap = 1 }, "waiting, at 1"},
		{"heap order", func(q *Queue[string]) { q.at(q.slotOf("w1")).readyAt = 1 << 62 }, "its parent"},
		{"timer", func(q *Queue[string]) { q.armedAt = 0 }, "timer armed at 0"},
		{"free list", func(q *Queue[string]) { q.free = q.slotOf("r1") }, "free slot"},
		{"depth", func(q *Queue[string]) { q.metrics.depth++ }, "metrics: depth 4"},
		{"waiter", func(q *Queue[string]) { q.waiters = append(q.waiters, &waiter[string]{}) }, "parked with 2 keys ready"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := New(Options[string]{Metrics: nopProvider{}})
			defer q.ShutDown()
			for _, k := range []string{"f", "i", "r1", "r2"} {
				q.Add(k)
			}
			f, _ := q.Get() // in flight
			q.Add(f)        // and dirty
			q.AddAfter("w1", time.Hour)
			q.AddAfter("w2", 2*time.Hour)
			i, _ := q.Get()
			q.Done(i) // idle
			require.NoError(t, q.check())
			withLock(q, func() { tt.give(q) })
			err := q.check()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wants)
			q.waiters = nil
		})
	}
}
