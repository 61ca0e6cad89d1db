package workqueue_test

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/reconcile"
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

// A worker's loop that hands each key back as it takes the next: one
// acquisition of the queue's lock per key. It ends when the queue shuts
// down; the key it holds then is already done.
func ExampleQueue_DoneAndGet() {
	q := workqueue.New(workqueue.Options[string]{})
	for _, k := range []string{"a", "b", "c"} {
		q.Add(k)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		key, shutdown := q.Get()
		for !shutdown {
			fmt.Println("reconcile", key)
			if q.Len() == 0 {
				q.ShutDown() // the example's end; a controller's comes from its context
			}
			key, shutdown = q.DoneAndGet(key)
		}
	}()
	<-done
	// Output:
	// reconcile a
	// reconcile b
	// reconcile c
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

func ExampleQueue_Expect() {
	q := workqueue.New(workqueue.Options[string]{})
	defer q.ShutDown()

	// An informer is about to hand a new handler its 10,000 objects: the
	// queue makes room for them once it holds a few thousand, instead of
	// growing its index step by step.
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = fmt.Sprint("ns/config-", i)
	}
	q.Expect(len(keys))
	for _, k := range keys {
		q.AddWithOpts(workqueue.AddOpts{Priority: workqueue.LowPriority}, k)
	}
	fmt.Println("queued:", q.Len())
	// Output:
	// queued: 10000
}

func ExampleNewMaxOfRateLimiter() {
	rl := workqueue.NewMaxOfRateLimiter(
		workqueue.NewItemExponentialFailureRateLimiter[string](5*time.Millisecond, time.Minute),
		workqueue.NewBucketRateLimiter[string](10, 100),
	)
	fmt.Println(rl.When("a"), rl.When("a"), rl.When("b"))
	// Output: 5ms 10ms 5ms
}

// printed is a client-go style MetricsProvider that prints its counters.
type printed struct{}

type printCounter string

func (c printCounter) Inc()          { c.Add(1) }
func (c printCounter) Add(v float64) { fmt.Printf("%s +%g\n", string(c), v) }

type discard struct{}

func (discard) Inc()            {}
func (discard) Dec()            {}
func (discard) Set(float64)     {}
func (discard) Observe(float64) {}

func (printed) NewDepthMetric(string) workqueue.GaugeMetric { return discard{} }
func (printed) NewAddsMetric(name string) workqueue.CounterMetric {
	return printCounter(name + " adds")
}
func (printed) NewLatencyMetric(string) workqueue.HistogramMetric      { return discard{} }
func (printed) NewWorkDurationMetric(string) workqueue.HistogramMetric { return discard{} }
func (printed) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return discard{}
}
func (printed) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return discard{}
}
func (printed) NewRetriesMetric(name string) workqueue.CounterMetric {
	return printCounter(name + " retries")
}

func ExampleNewMetricsAdapter() {
	q := workqueue.New(workqueue.Options[string]{
		Name:    "jobs",
		Metrics: workqueue.NewMetricsAdapter(printed{}),
	})
	q.Add("a")
	q.Add("b")
	q.Add("a") // held once: not an add
	q.AddAfter("c", time.Hour)
	// The adapter forwards every 500ms, and once more when the queue's
	// metrics become final.
	q.ShutDown()
	// Output:
	// jobs adds +2
	// jobs retries +1
}

// A queue of reconcile.Request hashes its keys with reconcile.Request.Hash,
// as the controller's queue does; without it the queue falls back to
// hash/maphash's generic Comparable, about 20 ns more per Add.
func ExampleOptions_hash() {
	q := workqueue.New(workqueue.Options[reconcile.Request]{
		Name: "widgets",
		Hash: reconcile.Request.Hash,
	})
	defer q.ShutDown()

	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop", Name: "cart"}}
	q.Add(req)
	q.Add(req) // held once
	fmt.Println(q.Len())
	// Output: 1
}
