package workqueue

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// LowPriority is the priority of events from an initial list or a resync,
// the same value as controller-runtime's handler.LowPriority.
const LowPriority = -100

// DefaultAgeAfter is how long a key waits behind keys of higher priority
// before it is served anyway, when Options.AgeAfter is 0.
const DefaultAgeAfter = 10 * time.Second

// Options configures a Queue. The zero value is a valid configuration.
type Options[K comparable] struct {
	// Name labels the queue's metrics; "" means "unnamed".
	Name string
	// RateLimiter decides the delay of AddRateLimited; nil means
	// DefaultRateLimiter[K]().
	RateLimiter RateLimiter[K]
	// Metrics reads the queue's Stats; nil means no metrics and no cost.
	// NewMetricsAdapter turns a per-call MetricsProvider into one.
	Metrics StatsProvider
	// AgeAfter is how long a key may wait behind keys of higher priority
	// before it is served in arrival order; 0 means DefaultAgeAfter and a
	// negative value means never.
	AgeAfter time.Duration
	// FairnessKey groups keys (for example by namespace) so that keys of
	// one priority are served round-robin across groups; nil means one
	// group, plain FIFO.
	FairnessKey func(K) string
	// Hash hashes a key for the queue's index, with the seed the queue
	// picked; equal keys must hash equal. nil means hash/maphash's
	// Comparable (about 30 ns for a struct of three strings in generic
	// code, a third of an Add), or maphash.String for string keys. A queue
	// of reconcile.Request takes reconcile.Request.Hash, as the
	// controller's does.
	Hash func(key K, seed maphash.Seed) uint64
}

// AddOpts qualifies AddWithOpts.
type AddOpts struct {
	// Priority orders ready keys: higher first, FIFO among equals. A key
	// added again keeps the highest priority it was added with.
	Priority int
	// After delays the key; 0 or less means ready now.
	After time.Duration
	// RateLimited delays the key by the rate limiter's When, or by After
	// when After is positive and shorter.
	RateLimited bool
}

// entry flags. A slot in use is in one of six states, and on the lists
// its state names; check (check_internal_test.go) verifies all of it after
// every step of the model test:
//   - fReady: on the list of the bucket of its priority (chain byArrival)
//     and, with a FairnessKey, of its group in that bucket (byGroup);
//   - fWaiting: in the delay heap, on no list;
//   - fProcessing: on q.proc (byArrival), oldest first; with fDirty, added
//     again since Get; with fWaiting, added again with a delay since Get;
//   - fIdle: on q.idleKeys (byArrival), still in the index (see retire).
//
// A free slot has no flag and is on the slab's free chain, not indexed.
const (
	fReady      uint8 = 1 << iota // in a ready bucket; never processing
	fDirty                        // added while processing: ready at Done
	fWaiting                      // in the delay heap
	fProcessing                   // handed out by Get, not yet Done
	fIdle                         // finished, still indexed (see retire); no other flag
)

const none int32 = -1

// entry is the state of one key, kept in a slab and linked by index.
type entry[K comparable] struct {
	key      K
	tag      uint32       // key's tag in the index (tagOf)
	links    [chains]link // byArrival: a bucket, in flight or retired; byGroup: a fairness group
	heap     int32        // index in the delay heap
	bucket   int32        // bucket while ready
	group    int32        // fairness group while ready
	flags    uint8
	prio     int   // priority of the pending add
	enqueued int64 // when the key became pending (ns since the queue's base)
	readyAt  int64 // when a waiting key becomes ready
	started  int64 // when processing began (metrics only)
}

// waiter is a worker parked in Get; an Add hands it a key directly.
type waiter[K comparable] struct {
	ch       chan struct{}
	key      K
	shutdown bool
}

// Queue is a de-duplicating, stingy, delaying, rate-limiting priority
// queue of keys. See the package documentation for its guarantees.
type Queue[K comparable] struct {
	mu      sync.Mutex
	index   index // key to slot; its seed is set by New and only read after
	slab[K]       // the state of the keys, by slot

	readySet // ready keys by priority
	heap     []int32
	armedAt  int64 // deadline of the armed timer; 0: none
	timer    *time.Timer

	waiters    []*waiter[K]
	pool       sync.Pool
	inflight   int
	startedSum int64
	proc       list  // the keys in flight, oldest first
	idle       int   // retired keys still in the index
	expected   int   // keys announced by Expect, not yet made room for
	idleKeys   list  // the retired keys
	stamp      bool  // record enqueue times (metrics or several priorities)
	addsReady  uint8 // whether each of the last 8 Adds needed the time, a bit each
	shutdown   bool
	drained    chan struct{}

	// The fields below are read without the lock (closed by every call,
	// clockFirst by Add) or never written after New; the padding keeps
	// them off the cache lines that are written under the lock.
	_          [64]byte
	closed     atomic.Bool
	clockFirst atomic.Bool // most recent Adds needed the time: Add reads it before locking

	rl       RateLimiter[K]
	metrics  *stats
	base     time.Time
	ageAfter int64
	fairKey  func(K) string
	hash     func(K, maphash.Seed) uint64 // Options.Hash or hasherOf's
}

// New returns a running queue.
func New[K comparable](opts Options[K]) *Queue[K] {
	if opts.Name == "" {
		opts.Name = "unnamed"
	}
	if opts.RateLimiter == nil {
		opts.RateLimiter = DefaultRateLimiter[K]()
	}
	if opts.AgeAfter == 0 {
		opts.AgeAfter = DefaultAgeAfter
	}
	q := &Queue[K]{
		index:    newIndex(),
		hash:     hasherOf(opts.Hash),
		slab:     slab[K]{free: none},
		proc:     emptyList,
		idleKeys: emptyList,
		rl:       opts.RateLimiter,
		base:     time.Now(),
		ageAfter: int64(opts.AgeAfter),
		fairKey:  opts.FairnessKey,
	}
	q.pool.New = func() any { return &waiter[K]{ch: make(chan struct{}, 1)} }
	if opts.Metrics != nil {
		q.metrics = newStats(opts.Metrics.HistogramBuckets())
		q.stamp = true
		q.metrics.final = opts.Metrics.RegisterQueue(opts.Name, q.readStats)
	}
	return q
}

// Add makes key ready now.
func (q *Queue[K]) Add(key K) {
	if q.closed.Load() {
		return
	}
	now := int64(-1)
	if q.clockFirst.Load() {
		now = q.now()
	}
	tag := q.tagOf(key)
	q.mu.Lock()
	added := q.add(key, tag, 0, 0, now) // reads the clock if needed and not read
	if q.stamp {
		q.learnClockFirst(added)
	}
	q.countLocked(b2i(added), 0)
	q.mu.Unlock()
}

// AddAfter makes key ready after d; d of 0 or less is Add. If key is
// already waiting, the earlier ready time wins.
func (q *Queue[K]) AddAfter(key K, d time.Duration) {
	if q.closed.Load() {
		return
	}
	now := q.metricsNow()
	tag := q.tagOf(key)
	q.mu.Lock()
	added := q.add(key, tag, 0, d, now)
	q.countLocked(b2i(added), 1)
	q.mu.Unlock()
}

// AddRateLimited makes key ready after the rate limiter's When(key).
func (q *Queue[K]) AddRateLimited(key K) {
	if q.closed.Load() {
		return
	}
	d := q.rl.When(key)
	now := q.metricsNow()
	tag := q.tagOf(key)
	q.mu.Lock()
	added := q.add(key, tag, 0, d, now)
	q.countLocked(b2i(added), 1)
	q.mu.Unlock()
}

// Expecter is told that about n keys are about to be added: a Queue
// (Expect). It is the one declaration of that seam: kubeloop's informer
// announces the objects it hands a newly added handler to a handler that
// is an Expecter, a controller's source passes the announcement on to its
// queue, and the controller's watch on to the Queue.
type Expecter interface{ Expect(n int) }

var _ Expecter = (*Queue[string])(nil)

// Expect tells the queue that about n keys are about to be added, as when
// an informer hands a new handler every object it holds. Once the queue
// holds expectAt keys with more announced, it makes room for all of them
// at once instead of growing its index step by step, which on a burst of
// 100k new keys cost about 40% of each Add (BenchmarkBurstDrain). When
// fewer keys follow (a predicate drops most), an announcement costs
// nothing below expectAt keys, where the queue grows as usual; above, the
// index is sized for the announced count (8 to 16 bytes a key) until the
// queue next empties and lets it go. The next announcement replaces it.
func (q *Queue[K]) Expect(n int) {
	q.mu.Lock()
	q.expected = n
	q.mu.Unlock()
}

// AddWithOpts adds keys with a priority, a delay or a rate limit.
func (q *Queue[K]) AddWithOpts(o AddOpts, keys ...K) {
	if q.closed.Load() {
		return
	}
	if o.RateLimited {
		for _, key := range keys {
			d := q.rl.When(key)
			if o.After > 0 && o.After < d {
				d = o.After
			}
			now := q.metricsNow()
			tag := q.tagOf(key)
			q.mu.Lock()
			added := q.add(key, tag, o.Priority, d, now)
			q.countLocked(b2i(added), 1)
			q.mu.Unlock()
		}
		return
	}
	now := q.metricsNow()
	added := 0
	q.mu.Lock()
	for _, key := range keys {
		if q.add(key, q.tagOf(key), o.Priority, o.After, now) {
			added++
		}
	}
	q.countLocked(added, b2i(o.After > 0)*len(keys))
	q.mu.Unlock()
}

// metricsNow reads the clock before taking the lock when metrics need it.
func (q *Queue[K]) metricsNow() int64 {
	if q.metrics == nil {
		return -1
	}
	return q.now()
}

// Get blocks until a key is ready and hands it out; the caller must call
// Done(key) when finished. It returns shutdown true, at once, after
// ShutDown or ShutDownWithDrain.
func (q *Queue[K]) Get() (key K, shutdown bool) {
	now := q.metricsNow()
	q.mu.Lock()
	return q.getLocked(now)
}

// getLocked is Get with the lock held; it releases the lock.
func (q *Queue[K]) getLocked(now int64) (key K, shutdown bool) {
	switch {
	case q.shutdown:
		q.mu.Unlock()
		return key, true
	case q.nready > 0:
		id := q.popReady()
		key = q.at(id).key
		q.startProcessing(id, now)
		q.addDepth(-1)
		q.mu.Unlock()
	default:
		w := q.pool.Get().(*waiter[K])
		q.waiters = append(q.waiters, w)
		q.mu.Unlock()
		<-w.ch
		key, shutdown = w.key, w.shutdown
		*w = waiter[K]{ch: w.ch}
		q.pool.Put(w)
	}
	return key, shutdown
}

// Done marks key as finished. If key was added while it was processed, it
// becomes ready again now.
func (q *Queue[K]) Done(key K) {
	now := q.metricsNow()
	q.mu.Lock()
	final := q.doneLocked(key, now)
	q.mu.Unlock()
	if final != nil {
		final()
	}
}

// DoneAndGet is Done(done) and then Get, under one acquisition of the
// queue's lock where Done and Get take it once each: a worker's loop
// (the controller's) hands back the key it finished as it asks for the
// next. With several workers that lock's cache line moves between cores
// for every acquisition; on a cold start of 1M ConfigMaps drained by two
// workers, Done and Get were a sixth of the workers' time
// (BENCHMARKS-perf.md, round 8). A Get that must wait waits after done is
// marked finished, so ShutDownWithDrain never waits on a worker that is
// itself waiting.
func (q *Queue[K]) DoneAndGet(done K) (key K, shutdown bool) {
	now := q.metricsNow()
	q.mu.Lock()
	final := q.doneLocked(done, now)
	if q.shutdown { // Get would return at once
		q.mu.Unlock()
		if final != nil {
			final()
		}
		return key, true
	}
	return q.getLocked(now)
}

// doneLocked is Done with the lock held. It returns the final statistics
// to publish once the lock is released (the last Done after a shutdown),
// else nil.
func (q *Queue[K]) doneLocked(key K, now int64) (final func()) {
	id := q.inFlight(key)
	if id == none {
		return nil
	}
	e := q.at(id)
	e.flags &^= fProcessing
	q.inflight--
	q.unlinkProcessing(id)
	if m := q.metrics; m != nil {
		m.work.observe(now - e.started)
		q.startedSum -= e.started
	}
	if e.flags&fDirty != 0 {
		e.flags &^= fDirty
		if q.dispatch(id, now) {
			q.addDepth(-1)
		}
	}
	if q.at(id).flags == 0 {
		q.retire(id)
	}
	if q.shutdown {
		final = q.finalStats()
		if q.inflight == 0 && q.drained != nil {
			close(q.drained)
			q.drained = nil
		}
	}
	return final
}

// Forget clears key's rate-limiter failures; it does not remove key from
// the queue.
func (q *Queue[K]) Forget(key K) { q.rl.Forget(key) }

// NumRequeues returns key's rate-limiter failures since its last Forget.
func (q *Queue[K]) NumRequeues(key K) int { return q.rl.NumRequeues(key) }

// Len returns the number of keys ready to be handed out, not counting
// keys that wait for a delay or for their processing to finish.
func (q *Queue[K]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.nready
}
