package workqueue_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kubeloop/kubeloop/workqueue"
)

func TestItemExponentialFailureRateLimiter(t *testing.T) {
	rl := workqueue.NewItemExponentialFailureRateLimiter[string](5*time.Millisecond, 40*time.Millisecond)
	var got []time.Duration
	for range 6 {
		got = append(got, rl.When("a"))
	}
	assert.Equal(t, []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
		40 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond}, got)
	assert.Equal(t, 6, rl.NumRequeues("a"))
	assert.Equal(t, 5*time.Millisecond, rl.When("b"), "per key")
	rl.Forget("a")
	assert.Equal(t, 0, rl.NumRequeues("a"))
	assert.Equal(t, 5*time.Millisecond, rl.When("a"))
}

func TestItemExponentialFailureRateLimiterCapsWithoutOverflow(t *testing.T) {
	rl := workqueue.NewItemExponentialFailureRateLimiter[string](time.Millisecond, 1000*time.Second)
	var last time.Duration
	for range 2000 {
		last = rl.When("a")
	}
	assert.Equal(t, 1000*time.Second, last)
}

func TestBucketRateLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := workqueue.NewBucketRateLimiter[string](10, 2)
		assert.Equal(t, time.Duration(0), rl.When("a"))
		assert.Equal(t, time.Duration(0), rl.When("b"))
		assert.Equal(t, 100*time.Millisecond, rl.When("c"), "burst spent: one token per 100ms")
		assert.Equal(t, 200*time.Millisecond, rl.When("d"))
		time.Sleep(time.Second)
		assert.Equal(t, time.Duration(0), rl.When("e"), "refilled")
		assert.Equal(t, 0, rl.NumRequeues("a"))
		rl.Forget("a")
	})
}

func TestMaxOfRateLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := workqueue.NewMaxOfRateLimiter(
			workqueue.NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second),
			workqueue.NewBucketRateLimiter[string](1, 1),
		)
		assert.Equal(t, time.Millisecond, rl.When("a"), "exponential is longer while the bucket has a token")
		assert.Equal(t, time.Second, rl.When("a"), "bucket is longer once empty")
		assert.Equal(t, 2, rl.NumRequeues("a"))
		rl.Forget("a")
		assert.Equal(t, 0, rl.NumRequeues("a"))
	})
}

func TestDefaultRateLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := workqueue.DefaultRateLimiter[string]()
		assert.Equal(t, 5*time.Millisecond, rl.When("a"))
		assert.Equal(t, 10*time.Millisecond, rl.When("a"))
		for i := range 98 {
			rl.When(string(rune(i)))
		}
		assert.Equal(t, 100*time.Millisecond, rl.When("z"), "10 qps once the burst of 100 is spent")
	})
}

func TestItemExponentialFailureRateLimiterForgetsOneKey(t *testing.T) {
	rl := workqueue.NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second)
	rl.Forget("a") // nothing failed yet
	assert.Equal(t, 0, rl.NumRequeues("a"))
	rl.When("a")
	rl.When("a")
	rl.When("b")
	rl.Forget("a")
	assert.Equal(t, 0, rl.NumRequeues("a"))
	assert.Equal(t, 1, rl.NumRequeues("b"), "forgetting a keeps b's failures")
	assert.Equal(t, 2*time.Millisecond, rl.When("b"))
	rl.Forget("b")
	assert.Equal(t, 0, rl.NumRequeues("b"))
	assert.Equal(t, time.Millisecond, rl.When("a"), "a starts from the base delay again")
	assert.Equal(t, 1, rl.NumRequeues("a"))
}
