package e2e_bench

import (
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kubeloop/kubeloop/bench/fakeapiserver"
)

// recorder tracks, per ConfigMap "config-<i>", the highest
// resourceVersion a reconcile has seen, and completes a phase when every
// object of the phase has reached its goal resourceVersion.
type recorder struct {
	seen       []atomic.Int64
	goal       []atomic.Int64 // 0: not part of the phase
	remaining  atomic.Int64
	done       atomic.Pointer[chan struct{}]
	reconciles atomic.Int64
	epoch      time.Time
	doneAt     atomic.Int64 // when the current phase completed, since epoch
	doneAtMono atomic.Int64 // the same, as fakeapiserver.MonotonicNow
}

func newRecorder(n int) *recorder {
	return &recorder{seen: make([]atomic.Int64, n), goal: make([]atomic.Int64, n), epoch: time.Now()}
}

// now is the time since the recorder's epoch (monotonic).
func (r *recorder) now() time.Duration { return time.Since(r.epoch) }

// completed closes ch, recording when.
func (r *recorder) completed(ch chan struct{}) {
	r.doneAtMono.Store(fakeapiserver.MonotonicNow())
	r.doneAt.Store(int64(r.now()))
	close(ch)
}

// completedAt is when the last phase completed, since the epoch.
func (r *recorder) completedAt() time.Duration { return time.Duration(r.doneAt.Load()) }

// completedAtMono is when the last phase completed, as
// fakeapiserver.MonotonicNow.
func (r *recorder) completedAtMono() int64 { return r.doneAtMono.Load() }

// phase starts a phase over goals (index -> resourceVersion) and returns
// the channel closed when it completes. Goals must be set before the
// events that reach them are sent.
func (r *recorder) phase(goals map[int]int64) <-chan struct{} {
	ch := make(chan struct{})
	r.remaining.Store(int64(len(goals)))
	r.done.Store(&ch)
	for i, rv := range goals {
		r.goal[i].Store(rv)
		if r.seen[i].Load() >= rv { // already there
			r.goal[i].Store(0)
			if r.remaining.Add(-1) == 0 {
				r.completed(ch)
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

func (r *recorder) observe(name, resourceVersion string) {
	r.reconciles.Add(1)
	i, err := strconv.Atoi(strings.TrimPrefix(name, "config-"))
	if err != nil || i >= len(r.seen) {
		return
	}
	rv, err := strconv.ParseInt(resourceVersion, 10, 64)
	if err != nil {
		return
	}
	for {
		old := r.seen[i].Load()
		if rv <= old || r.seen[i].CompareAndSwap(old, rv) {
			break
		}
	}
	g := r.goal[i].Load()
	if g != 0 && rv >= g && r.goal[i].CompareAndSwap(g, 0) {
		if r.remaining.Add(-1) == 0 {
			r.completed(*r.done.Load())
		}
	}
}
