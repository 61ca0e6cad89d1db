package workqueue

import (
	"sync"
	"time"
)

// MetricsProvider creates the metrics of one queue in client-go's shape:
// metrics that are told of every change. A queue records its Stats once,
// for a StatsProvider; NewMetricsAdapter reads them and feeds these
// metrics.
type MetricsProvider interface {
	// NewDepthMetric returns the gauge of items ready to be handed out.
	NewDepthMetric(name string) GaugeMetric
	// NewAddsMetric returns the counter of adds, one per key made ready.
	NewAddsMetric(name string) CounterMetric
	// NewLatencyMetric returns the histogram of seconds an item waited
	// between becoming ready and being handed out by Get.
	NewLatencyMetric(name string) HistogramMetric
	// NewWorkDurationMetric returns the histogram of seconds between Get
	// and Done.
	NewWorkDurationMetric(name string) HistogramMetric
	// NewUnfinishedWorkSecondsMetric returns the gauge of seconds of work
	// in flight, summed over all items handed out and not yet Done.
	NewUnfinishedWorkSecondsMetric(name string) SettableGaugeMetric
	// NewLongestRunningProcessorSecondsMetric returns the gauge of seconds
	// the oldest item in flight has been processed.
	NewLongestRunningProcessorSecondsMetric(name string) SettableGaugeMetric
	// NewRetriesMetric returns the counter of delayed and rate-limited adds.
	NewRetriesMetric(name string) CounterMetric
}

// GaugeMetric is a value that goes up and down by one. A GaugeMetric that
// is also a SettableGaugeMetric (as Prometheus gauges are) is Set instead.
type GaugeMetric interface {
	Inc()
	Dec()
}

// SettableGaugeMetric is a value that is set.
type SettableGaugeMetric interface {
	Set(float64)
}

// CounterMetric is a value that only goes up. A CounterMetric with an
// Add(float64) method (as Prometheus counters have) gets one Add per
// update instead of one Inc per count.
type CounterMetric interface {
	Inc()
}

// HistogramMetric records observations.
type HistogramMetric interface {
	Observe(float64)
}

// AdapterPeriod is how often a MetricsAdapter forwards a queue's Stats,
// client-go's period for its in-flight gauges.
const AdapterPeriod = 500 * time.Millisecond

// adapterBuckets are the bounds of the Stats a MetricsAdapter reads:
// client-go's and controller-runtime's workqueue buckets (10ns to 1000s by
// factors of 10).
var adapterBuckets = []float64{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000}

// MetricsAdapter is a StatsProvider that feeds the per-call metrics of a
// MetricsProvider. For each queue, New calls the provider's seven methods
// once with the queue's Name, and a goroutine of the adapter reads the
// queue's Stats every AdapterPeriod and tells the metrics what changed:
// counters by the new counts, gauges set (or moved by Inc and Dec), and
// each histogram one Observe per new observation, at the mean of the new
// observations in the same bucket of adapterBuckets. So a histogram with
// client-go's bounds gets exact counts and sums, and a histogram with
// other bounds is off by at most one of these buckets. Metrics lag the
// queue by up to AdapterPeriod. The goroutine exits, after one last update,
// when the queue's Stats become final (ShutDown with no key in flight, or
// the last Done after it).
type MetricsAdapter struct {
	p MetricsProvider
}

var _ StatsProvider = (*MetricsAdapter)(nil)

// NewMetricsAdapter returns the adapter of p, which must not be nil.
func NewMetricsAdapter(p MetricsProvider) *MetricsAdapter {
	return &MetricsAdapter{p: p}
}

// HistogramBuckets returns client-go's workqueue buckets, 10ns to 1000s by
// factors of 10.
func (a *MetricsAdapter) HistogramBuckets() []float64 {
	return append([]float64(nil), adapterBuckets...)
}

// RegisterQueue creates the queue's metrics and starts the goroutine that
// feeds them; the returned function stops it after a last update.
func (a *MetricsAdapter) RegisterQueue(name string, read func(*Stats)) func() {
	f := &feed{
		read:       read,
		depth:      a.p.NewDepthMetric(name),
		adds:       a.p.NewAddsMetric(name),
		latency:    a.p.NewLatencyMetric(name),
		work:       a.p.NewWorkDurationMetric(name),
		unfinished: a.p.NewUnfinishedWorkSecondsMetric(name),
		longest:    a.p.NewLongestRunningProcessorSecondsMetric(name),
		retries:    a.p.NewRetriesMetric(name),
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(AdapterPeriod)
		defer t.Stop()
		for {
			select {
			case <-stop:
				f.update()
				return
			case <-t.C:
				f.update()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
		})
	}
}

// feed is one queue's metrics in a MetricsAdapter; only its goroutine
// uses it.
type feed struct {
	read          func(*Stats)
	depth         GaugeMetric
	adds, retries CounterMetric
	latency, work HistogramMetric
	unfinished    SettableGaugeMetric
	longest       SettableGaugeMetric
	prev, cur     Stats
}

// update reads the queue's Stats and forwards the changes since the last
// update.
func (f *feed) update() {
	f.read(&f.cur)
	c, p := &f.cur, &f.prev
	if g, ok := f.depth.(SettableGaugeMetric); ok {
		g.Set(float64(c.Depth))
	} else {
		for range c.Depth - p.Depth {
			f.depth.Inc()
		}
		for range p.Depth - c.Depth {
			f.depth.Dec()
		}
	}
	count(f.adds, c.Adds-p.Adds)
	count(f.retries, c.Retries-p.Retries)
	observe(f.latency, &c.Latency, &p.Latency)
	observe(f.work, &c.WorkDuration, &p.WorkDuration)
	f.unfinished.Set(c.UnfinishedWorkSeconds)
	f.longest.Set(c.LongestRunningProcessorSeconds)
	f.prev, f.cur = f.cur, f.prev
}

func count(c CounterMetric, n uint64) {
	if n == 0 {
		return
	}
	if a, ok := c.(interface{ Add(float64) }); ok {
		a.Add(float64(n))
		return
	}
	for range n {
		c.Inc()
	}
}

// observe tells h of the observations in cur and not in prev, each at the
// mean of the new observations in its bucket.
func observe(h HistogramMetric, cur, prev *Histogram) {
	for i, n := range cur.Counts {
		sum := cur.Sums[i]
		if i < len(prev.Counts) {
			n -= prev.Counts[i]
			sum -= prev.Sums[i]
		}
		if n == 0 {
			continue
		}
		v := sum / float64(n)
		if i < len(adapterBuckets) {
			v = min(v, adapterBuckets[i]) // against rounding above the bound
		}
		for range n {
			h.Observe(v)
		}
	}
}
