package workqueue

import (
	"math/bits"
	"time"
)

// This file holds the per-key state machine; every function here runs with
// q.mu held, but fire, the delay timer's callback, which takes it.

// add records one add of key, whose tag (tagOf) is tag: ready now if
// after <= 0, else after a delay. now is the current time, or -1 to read
// the clock only if needed. It
// reports whether key became ready or dirty (an add in client-go's terms).
func (q *Queue[K]) add(key K, tag uint32, prio int, after time.Duration, now int64) bool {
	if q.shutdown {
		return false
	}
	if prio != 0 && !q.stamp {
		q.startStamping()
	}
	id := lookup(&q.index, &q.slab, key, tag)
	switch {
	case id == none:
		id = q.alloc(key, tag)
	case q.at(id).flags == fIdle:
		q.revive(id, key)
	}
	e := q.at(id)
	if after > 0 {
		if now < 0 {
			now = q.now()
		}
		switch {
		case e.flags&(fReady|fDirty) != 0: // already ready: earlier wins
			q.raise(id, prio)
		case e.flags&fWaiting != 0:
			e.prio = max(e.prio, prio)
			if at := now + int64(after); at < e.readyAt {
				e.readyAt = at
				q.heapUp(int(e.heap))
				q.arm()
			}
		default:
			e.prio = prio
			e.readyAt = now + int64(after)
			e.flags |= fWaiting
			q.heapPush(id)
			q.arm()
		}
		return false
	}
	switch {
	case e.flags&(fReady|fDirty) != 0:
		q.raise(id, prio)
		return false
	case e.flags&fWaiting != 0:
		q.heapRemove(id)
		e.flags &^= fWaiting
		prio = max(prio, e.prio)
	}
	e.prio = prio
	q.enqueue(id, now, now)
	return true
}

// enqueue makes a key that is not pending ready (or dirty, if it is being
// processed), stamped at time at; now is the current time; -1 means read
// the clock if needed. The depth gauge counts ready and dirty keys, not keys
// handed straight to a parked worker.
func (q *Queue[K]) enqueue(id int32, at, now int64) {
	if q.stamp {
		if at < 0 {
			if now < 0 {
				now = q.now()
			}
			at = now
		}
		q.at(id).enqueued = at
	}
	if q.at(id).flags&fProcessing != 0 {
		q.at(id).flags |= fDirty
		q.addDepth(1)
		return
	}
	if !q.dispatch(id, now) {
		q.addDepth(1)
	}
}

// dispatch hands a pending key to a parked worker and reports true, or
// else makes it ready; now is the current time if known, else -1.
func (q *Queue[K]) dispatch(id int32, now int64) bool {
	n := len(q.waiters)
	if n == 0 {
		q.pushReady(id)
		return false
	}
	w := q.waiters[n-1]
	q.waiters[n-1] = nil
	q.waiters = q.waiters[:n-1]
	w.key = q.at(id).key
	q.startProcessing(id, now)
	w.ch <- struct{}{}
	return true
}

// raise keeps the highest priority of a pending key.
func (q *Queue[K]) raise(id int32, prio int) {
	e := q.at(id)
	if prio <= e.prio {
		return
	}
	if e.flags&fReady == 0 {
		e.prio = prio
		return
	}
	q.unlinkReady(id)
	q.at(id).prio = prio
	q.pushReady(id)
}

// startProcessing marks a key handed out at time now (-1: read the clock
// if needed) and records how long it waited.
func (q *Queue[K]) startProcessing(id int32, now int64) {
	e := q.at(id)
	e.flags = fProcessing
	q.inflight++
	q.pushBack(&q.proc, byArrival, id)
	if q.metrics == nil {
		return
	}
	if now < 0 {
		now = q.now()
	}
	e.started = now
	q.startedSum += now
	q.metrics.latency.observe(now - e.enqueued)
}

// maxInFlightScan is how many keys in flight Done compares before it
// looks its key up in the index.
const maxInFlightScan = 8

// inFlight returns the slot of key if it is being processed, else none.
// The keys in flight are usually few (one per worker) and their slots
// were just touched by Get: comparing them costs less than hashing key
// into an index of 100k keys and waiting for the memory it lands on
// (BenchmarkBurstDrain).
func (q *Queue[K]) inFlight(key K) int32 {
	id := q.proc.head
	for range maxInFlightScan {
		if id == none {
			return none
		}
		if q.at(id).key == key {
			return id
		}
		id = q.next(byArrival, id)
	}
	id = lookup(&q.index, &q.slab, key, q.tagOf(key))
	if id == none || q.at(id).flags&fProcessing == 0 {
		return none
	}
	return id
}

// unlinkProcessing removes a key from the processing list.
func (q *Queue[K]) unlinkProcessing(id int32) { q.unlink(&q.proc, byArrival, id) }

// startStamping starts recording enqueue times, needed once keys of
// several priorities compete; keys already pending count from now.
func (q *Queue[K]) startStamping() {
	q.stamp = true
	now := q.now()
	for i := range q.slots {
		if e := q.at(i); e.flags&(fReady|fDirty) != 0 {
			e.enqueued = now
		}
	}
}

// alloc creates the state of a new key, whose tag is tag.
func (q *Queue[K]) alloc(key K, tag uint32) int32 {
	if q.idle > 0 && 4*q.idle >= q.index.n {
		q.dropIdle()
	}
	id := q.newSlot()
	*q.at(id) = fresh(key, tag)
	if q.expected > 0 && q.index.n >= expectAt {
		q.growIndex()
	}
	q.index.insert(tag, id)
	return id
}

// expectAt is the number of keys from which an announcement (Expect)
// makes room in the index for every announced key.
const expectAt = 4096

// growIndex makes room in the index for the keys Expect announced.
func (q *Queue[K]) growIndex() {
	q.index.reserve(q.expected)
	q.expected = 0
}

// fresh returns the state of a key just added: linked into nothing.
func fresh[K comparable](key K, tag uint32) entry[K] {
	return entry[K]{key: key, tag: tag, links: [chains]link{{none, none}, {none, none}}, heap: none, bucket: none, group: none}
}

// retire sets aside the state of a key that Done left neither pending nor
// in flight. Deleting a key from a large index costs as much as looking
// it up (the memory it lands on is cold), so a retired key stays in the
// index, idle, until an Add of it revives its slot, the queue empties
// (shrink, or dropIdle when small), or new keys find a quarter of the
// index idle (dropIdle in alloc, which bounds the index to 4/3 of the
// keys it holds at most). A controller's cold start drains 100k keys
// without deleting any (BenchmarkBurstDrain).
func (q *Queue[K]) retire(id int32) {
	q.at(id).flags = fIdle
	q.pushBack(&q.idleKeys, byArrival, id)
	q.idle++
	if q.index.n == q.idle { // empty
		if q.slots > shrinkAbove {
			q.shrink()
		} else {
			q.dropIdle()
		}
	}
}

// revive makes the slot of a retired key the state of a new add of key.
func (q *Queue[K]) revive(id int32, key K) {
	q.unlink(&q.idleKeys, byArrival, id)
	q.idle--
	*q.at(id) = fresh(key, q.at(id).tag)
}

// dropIdle releases every retired key.
func (q *Queue[K]) dropIdle() {
	for id := q.idleKeys.head; id != none; {
		next := q.next(byArrival, id)
		q.release(id)
		id = next
	}
	q.idleKeys, q.idle = emptyList, 0
}

// release forgets the state of a key that is neither pending nor in flight.
func (q *Queue[K]) release(id int32) {
	q.index.remove(q.at(id).tag, id)
	q.freeSlot(id)
}

// shrinkAbove is the number of key slots above which a queue that has
// just become empty lets go of its index and slab.
const shrinkAbove = 4096

// shrink replaces the index and the slab of a queue holding no key (none
// pending, waiting or in flight) by empty ones. A Go map never shrinks: the
// index of a queue that once held a large initial list (100k keys) spreads
// the few keys of the steady state over megabytes, and each Add and Done
// pays cache misses to find them.
func (q *Queue[K]) shrink() {
	q.index.reset()
	q.dropAll()
	q.idleKeys, q.idle = emptyList, 0
}

// addDepth moves the count of ready and dirty keys by delta (±1).
func (q *Queue[K]) addDepth(delta int) {
	if m := q.metrics; m != nil {
		m.depth += delta
	}
}

// learnClockFirst records whether an Add made its key ready, and so needed
// the time, and sets clockFirst when at least half of the last 8 did. Add
// then reads the clock before taking the lock instead of inside it, which
// keeps the section other goroutines wait for short when most adds are of
// new keys, and saves the read when most are duplicates; q.mu held.
// bench/workqueue's BenchmarkQueue (metrics=on, 8 interleaved rounds)
// shows what it buys over either fixed choice: reading always under the
// lock costs unique_p1w1 +26% and dup50_p1w1 +98%, reading always before
// it costs hot100_p1w1 +65%.
func (q *Queue[K]) learnClockFirst(added bool) {
	q.addsReady = q.addsReady<<1 | uint8(b2i(added))
	if want := bits.OnesCount8(q.addsReady) >= 4; want != q.clockFirst.Load() {
		q.clockFirst.Store(want)
	}
}

// arm makes sure the timer fires by the earliest deadline in the heap.
func (q *Queue[K]) arm() {
	if len(q.heap) == 0 {
		return
	}
	next := q.at(q.heap[0]).readyAt
	if q.armedAt != 0 && q.armedAt <= next {
		return
	}
	q.armedAt = next
	d := max(time.Duration(next-q.now()), 0)
	if q.timer == nil {
		q.timer = time.AfterFunc(d, q.fire)
	} else {
		q.timer.Reset(d)
	}
}

// fire makes every key whose deadline passed ready, then re-arms.
func (q *Queue[K]) fire() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return
	}
	q.armedAt = 0
	now := q.now()
	for len(q.heap) > 0 {
		id := q.heap[0]
		at := q.at(id).readyAt
		if at > now {
			break
		}
		q.heapRemove(id)
		q.at(id).flags &^= fWaiting
		q.countFired()
		q.enqueue(id, at, now)
	}
	q.arm()
}
