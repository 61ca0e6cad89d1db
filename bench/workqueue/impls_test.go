package workqueue_bench

import (
	"time"

	cgworkqueue "k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

type key = reconcile.Request

// queue is what every benchmark drives; each implementation adapts to it.
type queue interface {
	Add(key)
	AddAfter(key, time.Duration)
	AddRateLimited(key)
	Get() (key, bool)
	Done(key)
	Forget(key)
	ShutDown()
	// AddPriority adds key with a priority (kubeloop and the CR priority
	// queue only).
	AddPriority(key, int)
}

type impl struct {
	name     string
	new      func(metrics bool) queue
	priority bool
}

// Every implementation uses the same per-key exponential limiter (5ms to
// 1000s), the CR priority queue's default, so no token bucket caps any of
// them.
var impls = []impl{
	{name: "kubeloop", new: newKubeloop, priority: true},
	{name: "clientgo", new: newClientGo},
	{name: "crpq", new: newCRPQ, priority: true},
}

// kubeloopProvider is the provider the manager installs in production:
// internal/metrics' workqueue provider, registered on a registry.
var kubeloopProvider = newProductionProvider("bench_kubeloop")

type kubeloopQueue struct{ *workqueue.Queue[key] }

func (q kubeloopQueue) AddPriority(k key, p int) {
	q.AddWithOpts(workqueue.AddOpts{Priority: p}, k)
}

func newKubeloop(metrics bool) queue {
	opts := workqueue.Options[key]{
		RateLimiter: workqueue.NewItemExponentialFailureRateLimiter[key](5*time.Millisecond, 1000*time.Second),
		Hash:        reconcile.Request.Hash, // as the controller's queue
	}
	if metrics {
		opts.Name = "bench_kubeloop"
		opts.Metrics = kubeloopProvider
	}
	return kubeloopQueue{workqueue.New(opts)}
}

type clientGoQueue struct {
	cgworkqueue.TypedRateLimitingInterface[key]
}

func (q clientGoQueue) AddPriority(k key, _ int) { q.Add(k) }

// newClientGo returns client-go's typed rate-limiting queue. A named queue
// gets the global metrics provider, which controller-runtime's init sets
// to its Prometheus provider; an unnamed one gets none.
func newClientGo(metrics bool) queue {
	cfg := cgworkqueue.TypedRateLimitingQueueConfig[key]{}
	if metrics {
		cfg.Name = "bench_clientgo"
	}
	rl := cgworkqueue.NewTypedItemExponentialFailureRateLimiter[key](5*time.Millisecond, 1000*time.Second)
	return clientGoQueue{cgworkqueue.NewTypedRateLimitingQueueWithConfig(rl, cfg)}
}

type crQueue struct {
	priorityqueue.PriorityQueue[key]
}

func (q crQueue) AddPriority(k key, p int) {
	q.AddWithOpts(priorityqueue.AddOpts{Priority: &p}, k)
}

// newCRPQ returns controller-runtime's priority queue with its default
// Prometheus provider, or with a no-op provider.
func newCRPQ(metrics bool) queue {
	return crQueue{priorityqueue.New("bench_crpq", func(o *priorityqueue.Opts[key]) {
		if !metrics {
			o.MetricProvider = noopProvider{}
		}
	})}
}

type noopProvider struct{}

type noopMetric struct{}

func (noopMetric) Inc()            {}
func (noopMetric) Dec()            {}
func (noopMetric) Set(float64)     {}
func (noopMetric) Observe(float64) {}

func (noopProvider) NewDepthMetric(string) cgworkqueue.GaugeMetric       { return noopMetric{} }
func (noopProvider) NewAddsMetric(string) cgworkqueue.CounterMetric      { return noopMetric{} }
func (noopProvider) NewLatencyMetric(string) cgworkqueue.HistogramMetric { return noopMetric{} }
func (noopProvider) NewWorkDurationMetric(string) cgworkqueue.HistogramMetric {
	return noopMetric{}
}
func (noopProvider) NewUnfinishedWorkSecondsMetric(string) cgworkqueue.SettableGaugeMetric {
	return noopMetric{}
}
func (noopProvider) NewLongestRunningProcessorSecondsMetric(string) cgworkqueue.SettableGaugeMetric {
	return noopMetric{}
}
func (noopProvider) NewRetriesMetric(string) cgworkqueue.CounterMetric { return noopMetric{} }
