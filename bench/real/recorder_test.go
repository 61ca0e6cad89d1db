package real_bench

import (
	"strconv"
	"strings"
	"sync/atomic"
)

// recorder tracks, per ConfigMap bench/config-<i>, the highest data["gen"]
// a reconcile has seen (stored as gen+1, so 0 means never reconciled), and
// completes a phase when every object of the phase has reached its goal.
// Adapted from bench/e2e, which keys on resourceVersions the fake server
// assigns in advance.
type recorder struct {
	seen       []atomic.Int64
	goal       []atomic.Int64 // 0: not part of the phase
	remaining  atomic.Int64
	done       atomic.Pointer[chan struct{}]
	reconciles atomic.Int64
}

func newRecorder(n int) *recorder {
	return &recorder{seen: make([]atomic.Int64, n), goal: make([]atomic.Int64, n)}
}

// phase starts a phase over goals (index -> gen+1) and returns the channel
// closed when it completes. Goals must be set before the writes that reach
// them.
func (r *recorder) phase(goals map[int]int64) <-chan struct{} {
	ch := make(chan struct{})
	r.remaining.Store(int64(len(goals)))
	r.done.Store(&ch)
	if len(goals) == 0 {
		close(ch)
	}
	for i, g := range goals {
		r.goal[i].Store(g)
		if r.seen[i].Load() >= g && r.goal[i].CompareAndSwap(g, 0) {
			if r.remaining.Add(-1) == 0 {
				close(ch)
			}
		}
	}
	return ch
}

// phaseAll is a phase where every object must be reconciled once.
func (r *recorder) phaseAll() <-chan struct{} {
	ch := make(chan struct{})
	r.remaining.Store(int64(len(r.goal)))
	r.done.Store(&ch)
	for i := range r.goal {
		r.goal[i].Store(1)
	}
	return ch
}

func (r *recorder) observe(ns, name, gen string) {
	r.reconciles.Add(1)
	if ns != namespace {
		return
	}
	i, err := strconv.Atoi(strings.TrimPrefix(name, "config-"))
	if err != nil || i < 0 || i >= len(r.seen) {
		return
	}
	g, err := strconv.ParseInt(gen, 10, 64)
	if err != nil {
		return
	}
	v := g + 1
	for {
		old := r.seen[i].Load()
		if v <= old || r.seen[i].CompareAndSwap(old, v) {
			break
		}
	}
	goal := r.goal[i].Load()
	if goal != 0 && v >= goal && r.goal[i].CompareAndSwap(goal, 0) {
		if r.remaining.Add(-1) == 0 {
			close(*r.done.Load())
		}
	}
}
