package workqueue

import "time"

// Waiting keys live in a 4-ary min-heap on readyAt, served by one timer
// armed for the earliest deadline. Every function here except fire runs
// with q.mu held.

func (q *Queue[K]) heapSet(i int, id int32) {
	q.heap[i] = id
	q.at(id).heap = int32(i)
}

func (q *Queue[K]) heapPush(id int32) {
	q.heap = append(q.heap, id)
	q.heapUp(len(q.heap) - 1)
}

func (q *Queue[K]) heapUp(i int) {
	id := q.heap[i]
	at := q.at(id).readyAt
	for i > 0 {
		p := (i - 1) / 4
		if q.at(q.heap[p]).readyAt <= at {
			break
		}
		q.heapSet(i, q.heap[p])
		i = p
	}
	q.heapSet(i, id)
}

func (q *Queue[K]) heapDown(i int) {
	id := q.heap[i]
	at := q.at(id).readyAt
	n := len(q.heap)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < c+4 && j < n; j++ {
			if q.at(q.heap[j]).readyAt < q.at(q.heap[m]).readyAt {
				m = j
			}
		}
		if q.at(q.heap[m]).readyAt >= at {
			break
		}
		q.heapSet(i, q.heap[m])
		i = m
	}
	q.heapSet(i, id)
}

func (q *Queue[K]) heapRemove(id int32) {
	i := int(q.at(id).heap)
	last := len(q.heap) - 1
	if i != last {
		moved := q.heap[last]
		q.heapSet(i, moved)
		q.heap = q.heap[:last]
		q.heapDown(i)
		q.heapUp(int(q.at(moved).heap))
	} else {
		q.heap = q.heap[:last]
	}
	q.at(id).heap = none
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
