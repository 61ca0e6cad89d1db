package workqueue

// Waiting keys live in a 4-ary min-heap on readyAt, served by one timer
// armed for the earliest deadline (arm and fire, in core.go). Every
// function here runs with q.mu held and calls nothing outside the heap.

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
