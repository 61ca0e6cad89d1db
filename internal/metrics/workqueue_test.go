package metrics

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/workqueue"
)

// exposition renders what reg exposes, one line per value, without the
// created timestamps: `name type {labels} value` and, for histograms, one
// line per bucket plus the count and sum.
func exposition(t *testing.T, reg prometheus.Gatherer) []string {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var out []string
	for _, mf := range mfs {
		out = append(out, fmt.Sprintf("# %s %s %q", mf.GetName(), mf.GetType(), mf.GetHelp()))
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			slices.Sort(labels)
			prefix := mf.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				out = append(out, fmt.Sprintf("%s %g", prefix, m.GetCounter().GetValue()))
				assert.NotNil(t, m.GetCounter().GetCreatedTimestamp(), prefix)
			case dto.MetricType_GAUGE:
				out = append(out, fmt.Sprintf("%s %g", prefix, m.GetGauge().GetValue()))
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					out = append(out, fmt.Sprintf("%s le=%g %d", prefix, b.GetUpperBound(), b.GetCumulativeCount()))
				}
				out = append(out, fmt.Sprintf("%s count=%d sum=%g", prefix, h.GetSampleCount(), h.GetSampleSum()))
				assert.NotNil(t, h.GetCreatedTimestamp(), prefix)
			default:
				t.Fatalf("%s: unexpected type %s", mf.GetName(), mf.GetType())
			}
		}
	}
	return out
}

// script drives a queue named name through adds, a delayed add, gets and
// dones with known waits; it leaves one key ready (a, added while it was
// processed) and one in flight for 2s (c), or none in flight when idle.
func script(name string, p workqueue.StatsProvider, idle bool) *workqueue.Queue[string] {
	q := workqueue.New(workqueue.Options[string]{Name: name, Metrics: p})
	q.Add("a")
	q.Add("a") // duplicate
	q.Add("b")
	q.AddAfter("c", time.Second)
	time.Sleep(time.Second)
	synctest.Wait()
	k, _ := q.Get() // a waited 1s
	time.Sleep(250 * time.Millisecond)
	q.Add(k) // dirty
	q.Done(k)
	k, _ = q.Get() // b waited 1.25s
	time.Sleep(3 * time.Millisecond)
	q.Done(k)
	k, _ = q.Get() // c waited 0.253s
	if idle {
		q.Done(k)
		time.Sleep(time.Second) // past the adapter's period
		synctest.Wait()
	} else {
		time.Sleep(2 * time.Second)
	}
	return q
}

// TestWorkqueueExposesWhatVectorsWould checks that the collected metrics
// are those that Prometheus vectors, fed through workqueue's
// MetricsAdapter the way client-go's queue feeds its provider, expose for
// the same sequence: names, help, types, labels, values, histogram
// buckets, counts and sums.
func TestWorkqueueExposesWhatVectorsWould(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		w, err := NewWorkqueue(reg, "apps")
		require.NoError(t, err)
		q := script("apps", w, true)
		defer q.ShutDown()
		got := exposition(t, reg)

		vreg := prometheus.NewRegistry()
		vq := script("apps", workqueue.NewMetricsAdapter(newVectors(vreg, "apps")), true)
		defer vq.ShutDown()
		assert.Equal(t, exposition(t, vreg), got)

		assert.Contains(t, got, `workqueue_adds_total{controller="apps",name="apps"} 4`)
		assert.Contains(t, got, `workqueue_retries_total{controller="apps",name="apps"} 1`)
		assert.Contains(t, got, `workqueue_depth{controller="apps",name="apps"} 1`)
		assert.Contains(t, got, `workqueue_queue_duration_seconds{controller="apps",name="apps"} le=0.1 0`)
		assert.Contains(t, got, `workqueue_queue_duration_seconds{controller="apps",name="apps"} le=1 2`, "1s and 0.253s")
		assert.Contains(t, got, `workqueue_queue_duration_seconds{controller="apps",name="apps"} le=10 3`, "and 1.25s")
		assert.Contains(t, got, `workqueue_queue_duration_seconds{controller="apps",name="apps"} count=3 sum=2.503`)
		assert.Contains(t, got, `workqueue_work_duration_seconds{controller="apps",name="apps"} le=0.01 2`, "0.003s and 0s")
		assert.Contains(t, got, `workqueue_work_duration_seconds{controller="apps",name="apps"} count=3 sum=0.253`)
		assert.Contains(t, got, `workqueue_unfinished_work_seconds{controller="apps",name="apps"} 0`)
	})
}

// vectors is a client-go style MetricsProvider on Prometheus vectors with
// the collector's names, help, labels and buckets.
type vectors struct {
	controller                 string
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, work              *prometheus.HistogramVec
}

func newVectors(reg prometheus.Registerer, controller string) *vectors {
	labels := []string{"name", "controller"}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: name, Help: help}, labels)
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: name, Help: help}, labels)
	}
	hist := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "workqueue", Name: name, Help: help, Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12),
		}, labels)
	}
	v := &vectors{
		controller: controller,
		depth:      gauge("depth", "Current depth of workqueue"),
		adds:       counter("adds_total", "Total number of adds handled by workqueue"),
		latency:    hist("queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested"),
		work:       hist("work_duration_seconds", "How long in seconds processing an item from workqueue takes."),
		unfinished: gauge("unfinished_work_seconds", "How many seconds of work has been done that is in progress and hasn't "+
			"been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck "+
			"threads by observing the rate at which this increases."),
		longest: gauge("longest_running_processor_seconds", "How many seconds has the longest running processor for workqueue been running."),
		retries: counter("retries_total", "Total number of retries handled by workqueue"),
	}
	reg.MustRegister(v.depth, v.adds, v.latency, v.work, v.unfinished, v.longest, v.retries)
	return v
}

func (v *vectors) NewDepthMetric(name string) workqueue.GaugeMetric {
	return v.depth.WithLabelValues(name, v.controller)
}
func (v *vectors) NewAddsMetric(name string) workqueue.CounterMetric {
	return v.adds.WithLabelValues(name, v.controller)
}
func (v *vectors) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return v.latency.WithLabelValues(name, v.controller)
}
func (v *vectors) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return v.work.WithLabelValues(name, v.controller)
}
func (v *vectors) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return v.unfinished.WithLabelValues(name, v.controller)
}
func (v *vectors) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return v.longest.WithLabelValues(name, v.controller)
}
func (v *vectors) NewRetriesMetric(name string) workqueue.CounterMetric {
	return v.retries.WithLabelValues(name, v.controller)
}

func TestWorkqueueReadsWorkInFlightWhenCollected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		w, err := NewWorkqueue(reg, "apps")
		require.NoError(t, err)
		q := script("apps", w, false)
		defer q.ShutDown()
		got := exposition(t, reg)
		assert.Contains(t, got, `workqueue_unfinished_work_seconds{controller="apps",name="apps"} 2`)
		assert.Contains(t, got, `workqueue_longest_running_processor_seconds{controller="apps",name="apps"} 2`)
		time.Sleep(time.Second)
		got = exposition(t, reg)
		assert.Contains(t, got, `workqueue_unfinished_work_seconds{controller="apps",name="apps"} 3`, "exact at every scrape")
	})
}

func TestWorkqueueSeries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		apps, err := NewWorkqueue(reg, "apps")
		require.NoError(t, err)
		pods, err := NewWorkqueue(reg, "pods")
		require.NoError(t, err, "a second controller shares the collector")

		first := script("apps", apps, true)
		first.ShutDown() // retired: its counts stay in the series
		second := workqueue.New(workqueue.Options[string]{Name: "apps", Metrics: apps})
		defer second.ShutDown()
		third := workqueue.New(workqueue.Options[string]{Name: "apps", Metrics: apps})
		defer third.ShutDown()
		second.Add("x")
		third.Add("y")
		third.Add("z")
		p := workqueue.New(workqueue.Options[string]{Name: "pods", Metrics: pods})
		defer p.ShutDown()
		p.AddRateLimited("q")

		got := exposition(t, reg)
		assert.Contains(t, got, `workqueue_adds_total{controller="apps",name="apps"} 7`, "4 retired + 1 + 2 live")
		assert.Contains(t, got, `workqueue_depth{controller="apps",name="apps"} 3`, "live queues only")
		assert.Contains(t, got, `workqueue_queue_duration_seconds{controller="apps",name="apps"} count=3 sum=2.503`)
		assert.Contains(t, got, `workqueue_adds_total{controller="pods",name="pods"} 0`)
		assert.Contains(t, got, `workqueue_retries_total{controller="pods",name="pods"} 1`)
		assert.Len(t, got, 7+2*(5+2*(12+1)), "7 families, 2 series; a histogram has 12 buckets and a count line")
	})
}

func TestWorkqueueBuckets(t *testing.T) {
	w, err := NewWorkqueue(nil, "apps")
	require.NoError(t, err)
	b := w.HistogramBuckets()
	assert.Equal(t, prometheus.ExponentialBuckets(10e-9, 10, 12), b)
	b[0] = 42
	assert.NotEqual(t, 42.0, w.HistogramBuckets()[0], "a copy")
}

func TestWorkqueueConflictingCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "workqueue_depth", Help: "x"})))
	_, err := NewWorkqueue(reg, "apps")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "metrics:")
}
