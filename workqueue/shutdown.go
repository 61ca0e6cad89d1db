package workqueue

// ShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
func (q *Queue[K]) ShuttingDown() bool { return q.closed.Load() }

// ShutDown stops the queue: adds are ignored, keys not handed out are
// dropped, and every Get, blocked or not, returns shutdown. Keys in flight
// may still be marked Done. It does not wait.
func (q *Queue[K]) ShutDown() {
	q.mu.Lock()
	q.shutdownLocked()
	final := q.finalStats()
	q.mu.Unlock()
	if final != nil {
		final()
	}
}

// ShutDownWithDrain is ShutDown, then waits until every key in flight is
// marked Done. It blocks forever if a worker never calls Done.
func (q *Queue[K]) ShutDownWithDrain() {
	q.mu.Lock()
	q.shutdownLocked()
	var wait chan struct{}
	if q.inflight > 0 {
		if q.drained == nil {
			q.drained = make(chan struct{})
		}
		wait = q.drained
	}
	final := q.finalStats()
	q.mu.Unlock()
	if final != nil {
		final()
	}
	if wait != nil {
		<-wait
	}
}

func (q *Queue[K]) shutdownLocked() {
	if q.shutdown {
		return
	}
	q.shutdown = true
	q.closed.Store(true)
	for _, w := range q.waiters {
		w.shutdown = true
		w.ch <- struct{}{}
	}
	clear(q.waiters)
	q.waiters = q.waiters[:0]
	if q.timer != nil {
		q.timer.Stop()
	}
	// Drop every pending key; keep only the keys in flight.
	q.dropIdle()
	for id := range q.slots {
		e := q.at(id)
		if e.flags&(fReady|fDirty) != 0 {
			q.addDepth(-1)
		}
		if e.flags == 0 {
			continue
		}
		e.flags &= fProcessing
		e.heap = none // the heap is emptied below
		if e.flags == 0 {
			q.release(id)
		}
	}
	q.readySet.reset()
	q.heap = q.heap[:0]
}
