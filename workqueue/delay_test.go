package workqueue_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kubeloop/kubeloop/workqueue"
)

func TestAddAfter(t *testing.T) {
	tests := []struct {
		name    string
		give    func(q *workqueue.Queue[req])
		wantAt  time.Duration // when "a" becomes ready
		wantLen int           // keys handed out in total over 10s
	}{
		{
			name:    "delay",
			give:    func(q *workqueue.Queue[req]) { q.AddAfter(r("a"), time.Second) },
			wantAt:  time.Second,
			wantLen: 1,
		},
		{
			name: "earlier delay wins",
			give: func(q *workqueue.Queue[req]) {
				q.AddAfter(r("a"), 5*time.Second)
				q.AddAfter(r("a"), 2*time.Second)
			},
			wantAt:  2 * time.Second,
			wantLen: 1,
		},
		{
			name: "later delay is ignored",
			give: func(q *workqueue.Queue[req]) {
				q.AddAfter(r("a"), 2*time.Second)
				q.AddAfter(r("a"), 5*time.Second)
			},
			wantAt:  2 * time.Second,
			wantLen: 1,
		},
		{
			name: "add without delay wins",
			give: func(q *workqueue.Queue[req]) {
				q.AddAfter(r("a"), 5*time.Second)
				q.Add(r("a"))
			},
			wantAt:  0,
			wantLen: 1,
		},
		{
			name: "delay after ready add is ignored",
			give: func(q *workqueue.Queue[req]) {
				q.Add(r("a"))
				q.AddAfter(r("a"), time.Second)
			},
			wantAt:  0,
			wantLen: 1,
		},
		{
			name:    "zero delay is add",
			give:    func(q *workqueue.Queue[req]) { q.AddAfter(r("a"), 0) },
			wantAt:  0,
			wantLen: 1,
		},
		{
			name: "opts delay",
			give: func(q *workqueue.Queue[req]) {
				q.AddWithOpts(workqueue.AddOpts{After: 3 * time.Second}, r("a"))
			},
			wantAt:  3 * time.Second,
			wantLen: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := newQueue(t, workqueue.Options[req]{})
				start := time.Now()
				tt.give(q)
				k, _ := q.Get()
				assert.Equal(t, r("a"), k)
				assert.Equal(t, tt.wantAt, time.Since(start))
				q.Done(k)
				time.Sleep(10 * time.Second)
				assert.Equal(t, tt.wantLen-1, q.Len(), "no second delivery")
			})
		})
	}
}

func TestDelaysAreServedInDeadlineOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, workqueue.Options[req]{})
		for i, d := range []int{7, 3, 9, 1, 5, 2, 8, 6, 4} {
			q.AddAfter(r(string(rune('a'+i))), time.Duration(d)*time.Millisecond)
		}
		var order []string
		for range 9 {
			k, _ := q.Get()
			order = append(order, k.Name)
			q.Done(k)
		}
		assert.Equal(t, []string{"d", "f", "b", "i", "e", "h", "a", "g", "c"}, order)
	})
}

func TestAddAfterWhileProcessingWaitsForDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, workqueue.Options[req]{})
		q.Add(r("a"))
		k, _ := q.Get()
		q.AddAfter(r("a"), time.Second)
		time.Sleep(2 * time.Second)
		assert.Equal(t, 0, q.Len(), "ready but in flight")
		q.Done(k)
		assert.Equal(t, 1, q.Len())
	})
}

func TestAddRateLimitedBacksOffPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, workqueue.Options[req]{
			RateLimiter: workqueue.NewItemExponentialFailureRateLimiter[req](5*time.Millisecond, time.Second),
		})
		var waits []time.Duration
		for range 4 {
			start := time.Now()
			q.AddRateLimited(r("a"))
			k, _ := q.Get()
			waits = append(waits, time.Since(start))
			q.Done(k)
		}
		assert.Equal(t, []time.Duration{5 * time.Millisecond, 10 * time.Millisecond,
			20 * time.Millisecond, 40 * time.Millisecond}, waits)
		assert.Equal(t, 4, q.NumRequeues(r("a")))
		assert.Equal(t, 0, q.NumRequeues(r("b")))
		q.Forget(r("a"))
		assert.Equal(t, 0, q.NumRequeues(r("a")))
	})
}

func TestAddWithOptsRateLimitedTakesShorterOfAfterAndLimiter(t *testing.T) {
	tests := []struct {
		name  string
		limit time.Duration
		after time.Duration
		want  time.Duration
	}{
		{name: "limiter shorter", limit: time.Second, after: 3 * time.Second, want: time.Second},
		{name: "after shorter", limit: 3 * time.Second, after: time.Second, want: time.Second},
		{name: "no after", limit: 2 * time.Second, want: 2 * time.Second},
		{name: "limiter zero", limit: 0, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rl := &countingLimiter{d: tt.limit}
				q := newQueue(t, workqueue.Options[req]{RateLimiter: rl})
				start := time.Now()
				q.AddWithOpts(workqueue.AddOpts{RateLimited: true, After: tt.after}, r("a"))
				k, _ := q.Get()
				assert.Equal(t, r("a"), k)
				assert.Equal(t, tt.want, time.Since(start))
				assert.Equal(t, int64(1), rl.when.Load())
			})
		})
	}
}

func TestEarlierDeadlineRearmsTheTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, workqueue.Options[req]{})
		start := time.Now()
		q.AddAfter(r("a"), time.Minute)
		q.AddAfter(r("b"), time.Second) // re-arms earlier
		k, _ := q.Get()
		assert.Equal(t, r("b"), k)
		assert.Equal(t, time.Second, time.Since(start))
		q.Done(k)
		k, _ = q.Get()
		assert.Equal(t, r("a"), k)
		assert.Equal(t, time.Minute, time.Since(start))
		q.Done(k)
	})
}
