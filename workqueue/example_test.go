package workqueue_test

import (
	"fmt"
	"time"

	"github.com/kubeloop/kubeloop/workqueue"
)

func Example() {
	q := workqueue.New(workqueue.Options[string]{})
	defer q.ShutDown()

	q.AddWithOpts(workqueue.AddOpts{Priority: workqueue.LowPriority}, "from-initial-list")
	q.Add("changed")
	q.Add("changed") // held once
	q.AddWithOpts(workqueue.AddOpts{Priority: 10}, "urgent")

	for q.Len() > 0 {
		key, _ := q.Get()
		fmt.Println(key)
		q.Done(key)
	}
	// Output:
	// urgent
	// changed
	// from-initial-list
}

func ExampleQueue_AddRateLimited() {
	q := workqueue.New(workqueue.Options[string]{
		RateLimiter: workqueue.NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second),
	})
	defer q.ShutDown()

	for range 3 { // the reconcile fails three times
		q.AddRateLimited("flaky")
		key, _ := q.Get()
		q.Done(key)
	}
	fmt.Println("requeues:", q.NumRequeues("flaky"))
	q.Forget("flaky") // it succeeded: reset the backoff
	fmt.Println("requeues:", q.NumRequeues("flaky"))
	// Output:
	// requeues: 3
	// requeues: 0
}

func ExampleNewMaxOfRateLimiter() {
	rl := workqueue.NewMaxOfRateLimiter(
		workqueue.NewItemExponentialFailureRateLimiter[string](5*time.Millisecond, time.Minute),
		workqueue.NewBucketRateLimiter[string](10, 100),
	)
	fmt.Println(rl.When("a"), rl.When("a"), rl.When("b"))
	// Output: 5ms 10ms 5ms
}
