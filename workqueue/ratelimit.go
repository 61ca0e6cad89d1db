package workqueue

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// RateLimiter decides how long a key waits before it is retried. The queue
// calls When from AddRateLimited, Forget from Forget and NumRequeues from
// NumRequeues. Implementations must be safe for concurrent use.
type RateLimiter[K comparable] interface {
	// When returns how long key should wait before it is added again, and
	// counts one more failure for key.
	When(key K) time.Duration
	// Forget clears the failures of key: its next When starts from the
	// base delay again.
	Forget(key K)
	// NumRequeues returns how many times key has failed since the last
	// Forget.
	NumRequeues(key K) int
}

// DefaultRateLimiter returns the limiter used when Options.RateLimiter is
// nil, the same as client-go's default controller rate limiter: the larger
// of a per-key exponential backoff from 5ms to 1000s and the wait of a
// 10 qps token bucket with a burst of 100 shared by all keys.
func DefaultRateLimiter[K comparable]() *MaxOfRateLimiter[K] {
	return NewMaxOfRateLimiter(
		NewItemExponentialFailureRateLimiter[K](5*time.Millisecond, 1000*time.Second),
		NewBucketRateLimiter[K](10, 100),
	)
}

// ItemExponentialFailureRateLimiter waits base*2^n for a key that failed n
// times since its last Forget, capped at max.
type ItemExponentialFailureRateLimiter[K comparable] struct {
	mu       sync.Mutex
	failures map[K]int
	// failing is len(failures), written under mu: Forget and NumRequeues
	// of a limiter with no failing key (the common case: each successful
	// reconcile forgets its key) take neither mu nor the key's hash.
	failing atomic.Int64
	base    time.Duration
	max     time.Duration
}

var _ RateLimiter[string] = (*ItemExponentialFailureRateLimiter[string])(nil)

// NewItemExponentialFailureRateLimiter returns a per-key exponential
// backoff starting at base and capped at max.
func NewItemExponentialFailureRateLimiter[K comparable](base, max time.Duration) *ItemExponentialFailureRateLimiter[K] {
	return &ItemExponentialFailureRateLimiter[K]{failures: make(map[K]int), base: base, max: max}
}

// When counts a failure of key and returns base*2^(failures-1), at most max.
func (r *ItemExponentialFailureRateLimiter[K]) When(key K) time.Duration {
	r.mu.Lock()
	n := r.failures[key]
	r.failures[key] = n + 1
	r.failing.Store(int64(len(r.failures)))
	r.mu.Unlock()
	d := float64(r.base) * math.Pow(2, float64(n))
	if d > float64(r.max) || math.IsInf(d, 0) {
		return r.max
	}
	return time.Duration(d)
}

// Forget clears the failures of key.
func (r *ItemExponentialFailureRateLimiter[K]) Forget(key K) {
	if r.failing.Load() == 0 {
		return
	}
	r.mu.Lock()
	delete(r.failures, key)
	r.failing.Store(int64(len(r.failures)))
	r.mu.Unlock()
}

// NumRequeues returns the failures of key since its last Forget.
func (r *ItemExponentialFailureRateLimiter[K]) NumRequeues(key K) int {
	if r.failing.Load() == 0 {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[key]
}

// BucketRateLimiter is a token bucket shared by all keys: it refills at
// qps tokens a second up to burst, and When reserves one token, returning
// how long until that token is available. It never forgets and counts no
// requeues.
type BucketRateLimiter[K comparable] struct {
	mu     sync.Mutex
	qps    float64
	burst  float64
	tokens float64
	last   time.Time
}

var _ RateLimiter[string] = (*BucketRateLimiter[string])(nil)

// NewBucketRateLimiter returns a token bucket of qps tokens a second with
// room for burst tokens, starting full. A qps of 0 or less means no limit.
func NewBucketRateLimiter[K comparable](qps float64, burst int) *BucketRateLimiter[K] {
	return &BucketRateLimiter[K]{qps: qps, burst: float64(burst), tokens: float64(burst)}
}

// When reserves a token and returns the wait until it is available.
func (r *BucketRateLimiter[K]) When(K) time.Duration {
	if r.qps <= 0 {
		return 0
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.last.IsZero() {
		r.tokens = min(r.burst, r.tokens+now.Sub(r.last).Seconds()*r.qps)
	}
	r.last = now
	r.tokens--
	if r.tokens >= 0 {
		return 0
	}
	return time.Duration(-r.tokens / r.qps * float64(time.Second))
}

// Forget does nothing: the bucket is shared by all keys.
func (r *BucketRateLimiter[K]) Forget(K) {}

// NumRequeues returns 0: the bucket counts no keys.
func (r *BucketRateLimiter[K]) NumRequeues(K) int { return 0 }

// MaxOfRateLimiter waits the longest of its limiters' waits.
type MaxOfRateLimiter[K comparable] struct {
	limiters []RateLimiter[K]
}

var _ RateLimiter[string] = (*MaxOfRateLimiter[string])(nil)

// NewMaxOfRateLimiter combines limiters: When asks all of them and returns
// the longest wait, Forget forgets in all, NumRequeues is the largest.
func NewMaxOfRateLimiter[K comparable](limiters ...RateLimiter[K]) *MaxOfRateLimiter[K] {
	return &MaxOfRateLimiter[K]{limiters: limiters}
}

// When returns the longest wait of the limiters; each counts a failure.
func (r *MaxOfRateLimiter[K]) When(key K) time.Duration {
	var d time.Duration
	for _, l := range r.limiters {
		d = max(d, l.When(key))
	}
	return d
}

// Forget forgets key in every limiter.
func (r *MaxOfRateLimiter[K]) Forget(key K) {
	for _, l := range r.limiters {
		l.Forget(key)
	}
}

// NumRequeues returns the largest count of the limiters.
func (r *MaxOfRateLimiter[K]) NumRequeues(key K) int {
	n := 0
	for _, l := range r.limiters {
		n = max(n, l.NumRequeues(key))
	}
	return n
}
