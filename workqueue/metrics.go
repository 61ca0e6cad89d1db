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
type queueMetrics struct {
	depth      GaugeMetric
	depthSet   SettableGaugeMetric // depth, if it can be set; nil otherwise
	depthN     int                 // ready and dirty keys, guarded by the queue's mutex
	adds       CounterMetric
	latency    HistogramMetric
	work       HistogramMetric
	unfinished SettableGaugeMetric
	longest    SettableGaugeMetric
	retries    CounterMetric
}

func newQueueMetrics(p MetricsProvider, name string) *queueMetrics {
	if p == nil {
		return nil
	}
	m := &queueMetrics{
		depth:      p.NewDepthMetric(name),
		adds:       p.NewAddsMetric(name),
		latency:    p.NewLatencyMetric(name),
		work:       p.NewWorkDurationMetric(name),
		unfinished: p.NewUnfinishedWorkSecondsMetric(name),
		longest:    p.NewLongestRunningProcessorSecondsMetric(name),
		retries:    p.NewRetriesMetric(name),
	}
	m.depthSet, _ = m.depth.(SettableGaugeMetric)
	return m
}

// gaugeLoop refreshes the in-flight gauges until the queue shuts down.
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

// updateGauges sets the unfinished-work and longest-running gauges. The
// sum of start times makes unfinished work O(1); the processing list is
// ordered by start time, so its head is the longest running item.
func (q *Queue[K]) updateGauges() {
	q.mu.Lock()
	now := q.now()
	var unfinished, longest float64
	if q.inflight > 0 {
		unfinished = time.Duration(int64(q.inflight)*now - q.startedSum).Seconds()
		longest = time.Duration(now - q.entries[q.procHead].started).Seconds()
	}
	q.mu.Unlock()
	q.metrics.unfinished.Set(unfinished)
	q.metrics.longest.Set(longest)
}
