package workqueue

import "time"

// now returns the time since the queue's base in nanoseconds.
func (q *Queue[K]) now() int64 { return int64(time.Since(q.base)) }

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
