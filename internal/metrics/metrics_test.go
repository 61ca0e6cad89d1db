package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/workqueue"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}) }

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	var d dto.Metric
	require.NoError(t, c.Write(&d))
	return d.GetCounter().GetValue()
}

func TestControllersShareVectors(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, err := NewController(reg, "a")
	require.NoError(t, err)
	b, err := NewController(reg, "b")
	require.NoError(t, err)
	a.Errors.Inc()
	b.Errors.Inc()
	b.Errors.Inc()

	mfs, err := reg.Gather()
	require.NoError(t, err)
	byName := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		byName[mf.GetName()] = mf
	}
	errs := byName["controller_runtime_reconcile_errors_total"]
	require.NotNil(t, errs)
	require.Len(t, errs.GetMetric(), 2, "one vector, two controller labels")
	assert.Len(t, byName["controller_runtime_reconcile_total"].GetMetric(), 8, "four results per controller, from zero")

	again, err := NewController(reg, "a")
	require.NoError(t, err, "the same controller name reuses the series")
	assert.Equal(t, 1.0, counterValue(t, again.Errors))
}

func TestWorkqueueProvider(t *testing.T) {
	reg := prometheus.NewRegistry()
	w, err := NewWorkqueue(reg, "apps")
	require.NoError(t, err)
	q := workqueue.New(workqueue.Options[string]{Name: "apps", Metrics: w})
	defer q.ShutDown()
	q.Add("a")
	_, err = NewWorkqueue(reg, "pods")
	require.NoError(t, err)

	mfs, err := reg.Gather()
	require.NoError(t, err)
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			assert.Equal(t, map[string]string{"name": "apps", "controller": "apps"}, labels, mf.GetName())
		}
	}
	assert.Equal(t, []string{
		"workqueue_adds_total", "workqueue_depth", "workqueue_longest_running_processor_seconds",
		"workqueue_queue_duration_seconds", "workqueue_retries_total", "workqueue_unfinished_work_seconds",
		"workqueue_work_duration_seconds",
	}, names)
}

func TestNilRegisterer(t *testing.T) {
	m, err := NewController(nil, "a")
	require.NoError(t, err)
	m.Errors.Inc()
	assert.Equal(t, 1.0, counterValue(t, m.Errors), "works unregistered")
}

func TestConflictingCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: "controller_runtime_reconcile_errors_total", Help: "x"})))
	_, err := NewController(reg, "a")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "metrics:")
}
