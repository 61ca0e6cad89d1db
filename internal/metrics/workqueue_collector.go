package metrics

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeloop/kubeloop/workqueue"
)

// workqueueCollector produces the workqueue_* metrics of every queue
// registered through the Workqueue providers that share it, at collection
// time.
type workqueueCollector struct {
	buckets []float64

	depth, adds, latency, work, unfinished, longest, retries *prometheus.Desc

	mu     sync.Mutex
	series []*series // in creation order
	byKey  map[[2]string]*series
}

// series is one {name, controller} label set.
type series struct {
	name, controller string
	created          time.Time
	// total holds the counts and histograms of the queues that retired.
	total workqueue.Stats
	live  []*liveQueue
}

type liveQueue struct{ read func(*workqueue.Stats) }

var _ prometheus.Collector = (*workqueueCollector)(nil)

func newWorkqueueCollector() *workqueueCollector {
	labels := []string{"name", "controller"}
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName("", "workqueue", name), help, labels, nil)
	}
	return &workqueueCollector{
		buckets: prometheus.ExponentialBuckets(10e-9, 10, 12),
		depth:   desc("depth", "Current depth of workqueue"),
		adds:    desc("adds_total", "Total number of adds handled by workqueue"),
		latency: desc("queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested"),
		work:    desc("work_duration_seconds", "How long in seconds processing an item from workqueue takes."),
		unfinished: desc("unfinished_work_seconds", "How many seconds of work has been done that is in progress and hasn't "+
			"been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck "+
			"threads by observing the rate at which this increases."),
		longest: desc("longest_running_processor_seconds", "How many seconds has the longest running processor for workqueue been running."),
		retries: desc("retries_total", "Total number of retries handled by workqueue"),
		byKey:   make(map[[2]string]*series),
	}
}

// Describe sends the descriptors of the seven workqueue_* metrics.
func (c *workqueueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.depth, c.adds, c.latency, c.work, c.unfinished, c.longest, c.retries} {
		ch <- d
	}
}

// Collect reads every live queue and sends the metrics of every series.
func (c *workqueueCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.collect() {
		ch <- m
	}
}

func (c *workqueueCollector) collect() []prometheus.Metric {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]prometheus.Metric, 0, 7*len(c.series))
	var sum, one workqueue.Stats
	for _, s := range c.series {
		sum = s.total
		sum.Latency = cloneHistogram(s.total.Latency)
		sum.WorkDuration = cloneHistogram(s.total.WorkDuration)
		for _, q := range s.live {
			q.read(&one)
			addCumulative(&sum, &one)
			sum.Depth += one.Depth
			sum.UnfinishedWorkSeconds += one.UnfinishedWorkSeconds
			sum.LongestRunningProcessorSeconds = max(sum.LongestRunningProcessorSeconds, one.LongestRunningProcessorSeconds)
		}
		lv := []string{s.name, s.controller}
		out = append(out,
			prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(sum.Depth), lv...),
			prometheus.MustNewConstMetricWithCreatedTimestamp(c.adds, prometheus.CounterValue, float64(sum.Adds), s.created, lv...),
			c.histogram(c.latency, &sum.Latency, s.created, lv),
			c.histogram(c.work, &sum.WorkDuration, s.created, lv),
			prometheus.MustNewConstMetric(c.unfinished, prometheus.GaugeValue, sum.UnfinishedWorkSeconds, lv...),
			prometheus.MustNewConstMetric(c.longest, prometheus.GaugeValue, sum.LongestRunningProcessorSeconds, lv...),
			prometheus.MustNewConstMetricWithCreatedTimestamp(c.retries, prometheus.CounterValue, float64(sum.Retries), s.created, lv...),
		)
	}
	return out
}

// histogram returns a classic histogram of h over c.buckets.
func (c *workqueueCollector) histogram(d *prometheus.Desc, h *workqueue.Histogram, created time.Time, lv []string) prometheus.Metric {
	cum := make(map[float64]uint64, len(c.buckets))
	var n uint64
	for i, v := range h.Counts {
		n += v
		if i < len(c.buckets) {
			cum[c.buckets[i]] = n
		}
	}
	return prometheus.MustNewConstHistogramWithCreatedTimestamp(d, n, h.Sum(), cum, created, lv...)
}

func cloneHistogram(h workqueue.Histogram) workqueue.Histogram {
	return workqueue.Histogram{Counts: slices.Clone(h.Counts), Sums: slices.Clone(h.Sums)}
}

// addCumulative adds the counters and histograms of one to sum.
func addCumulative(sum, one *workqueue.Stats) {
	sum.Adds += one.Adds
	sum.Retries += one.Retries
	addHistogram(&sum.Latency, &one.Latency)
	addHistogram(&sum.WorkDuration, &one.WorkDuration)
}

func addHistogram(sum, one *workqueue.Histogram) {
	for i, v := range one.Counts {
		sum.Counts[i] += v
		sum.Sums[i] += one.Sums[i]
	}
}

func (c *workqueueCollector) seriesLocked(name, controller string) *series {
	k := [2]string{name, controller}
	if s := c.byKey[k]; s != nil {
		return s
	}
	s := &series{name: name, controller: controller, created: time.Now()}
	n := len(c.buckets) + 1
	s.total.Latency = workqueue.Histogram{Counts: make([]uint64, n), Sums: make([]float64, n)}
	s.total.WorkDuration = workqueue.Histogram{Counts: make([]uint64, n), Sums: make([]float64, n)}
	c.byKey[k] = s
	c.series = append(c.series, s)
	return s
}

// addQueue makes a queue's Stats part of its series until the returned
// function folds its final counts into the series' totals.
func (c *workqueueCollector) addQueue(name, controller string, read func(*workqueue.Stats)) func() {
	c.mu.Lock()
	s := c.seriesLocked(name, controller)
	q := &liveQueue{read: read}
	s.live = append(s.live, q)
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			var last workqueue.Stats
			q.read(&last)
			addCumulative(&s.total, &last)
			i := slices.Index(s.live, q)
			s.live = slices.Delete(s.live, i, i+1)
		})
	}
}
