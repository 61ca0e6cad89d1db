package workqueue

import "time"

// MetricsProvider creates the metrics of one queue. New calls each method
// once, with the queue's Name. A nil provider in Options means no metrics
// and no cost.
type MetricsProvider interface {
	// NewDepthMetric returns the gauge of items ready to be handed out.
	NewDepthMetric(name string) GaugeMetric
	// NewAddsMetric returns the counter of Add calls, one per key.
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
	// NewRetriesMetric returns the counter of rate-limited adds.
	NewRetriesMetric(name string) CounterMetric
}

// GaugeMetric is a value that goes up and down by one.
type GaugeMetric interface {
	Inc()
	Dec()
}

// SettableGaugeMetric is a value that is set.
type SettableGaugeMetric interface {
	Set(float64)
}

// CounterMetric is a value that only goes up.
type CounterMetric interface {
	Inc()
}

// HistogramMetric records observations.
type HistogramMetric interface {
	Observe(float64)
}

// gaugePeriod is how often the unfinished-work and longest-running gauges
// are refreshed, as in client-go.
const gaugePeriod = 500 * time.Millisecond

// queueMetrics holds one queue's metrics; a nil *queueMetrics means none.
// With a StatsProvider (collected), the queue keeps its counts here under
// its own mutex and the provider reads them when it collects; otherwise it
// updates the provider's metrics as they change.
type queueMetrics struct {
	collected bool // the provider is a StatsProvider: the fields below are used
	depthN    int  // ready and dirty keys, guarded by the queue's mutex

	// Guarded by the queue's mutex; collected only.
	adds, retries uint64
	latency, work histogram
	final         func() // the StatsProvider's, until it is called

	// The simple MetricsProvider's; nil when collected.
	depth      GaugeMetric
	depthSet   SettableGaugeMetric // depth, if it can be set; nil otherwise
	addsM      CounterMetric
	latencyM   HistogramMetric
	workM      HistogramMetric
	unfinished SettableGaugeMetric
	longest    SettableGaugeMetric
	retriesM   CounterMetric
}

func newQueueMetrics(p MetricsProvider, name string) *queueMetrics {
	if p == nil {
		return nil
	}
	if sp, ok := p.(StatsProvider); ok {
		b := sp.HistogramBuckets()
		return &queueMetrics{collected: true, latency: newHistogram(b), work: newHistogram(b)}
	}
	m := &queueMetrics{
		depth:      p.NewDepthMetric(name),
		addsM:      p.NewAddsMetric(name),
		latencyM:   p.NewLatencyMetric(name),
		workM:      p.NewWorkDurationMetric(name),
		unfinished: p.NewUnfinishedWorkSecondsMetric(name),
		longest:    p.NewLongestRunningProcessorSecondsMetric(name),
		retriesM:   p.NewRetriesMetric(name),
	}
	m.depthSet, _ = m.depth.(SettableGaugeMetric)
	return m
}

// gaugeLoop refreshes the in-flight gauges of a simple MetricsProvider
// until the queue shuts down.
func (q *Queue[K]) gaugeLoop() {
	defer close(q.gaugeDone)
	var tick <-chan time.Time
	if q.clk != nil {
		t := q.clk.NewTicker(gaugePeriod)
		defer t.Stop()
		tick = t.C()
	} else {
		t := time.NewTicker(gaugePeriod)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-q.stop:
			q.updateGauges()
			return
		case <-tick:
			q.updateGauges()
		}
	}
}

// updateGauges sets the unfinished-work and longest-running gauges.
func (q *Queue[K]) updateGauges() {
	q.mu.Lock()
	unfinished, longest := q.inflightSeconds()
	q.mu.Unlock()
	q.metrics.unfinished.Set(unfinished)
	q.metrics.longest.Set(longest)
}

// inflightSeconds returns the seconds of work in flight and the seconds
// the longest running key has been processed; q.mu held. The sum of start
// times makes unfinished work O(1); the processing list is ordered by
// start time, so its head is the longest running key.
func (q *Queue[K]) inflightSeconds() (unfinished, longest float64) {
	if q.inflight == 0 {
		return 0, 0
	}
	now := q.now()
	unfinished = time.Duration(int64(q.inflight)*now - q.startedSum).Seconds()
	longest = time.Duration(now - q.entries[q.procHead].started).Seconds()
	return unfinished, longest
}
