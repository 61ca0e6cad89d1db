package certwatcher_test

import (
	"os"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/certwatcher"
)

// counters returns the certwatcher_* counters gathered from reg, checking
// controller-runtime's help texts, type and absence of labels.
func counters(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	help := map[string]string{
		"certwatcher_read_certificate_total":        "Total number of certificate reads",
		"certwatcher_read_certificate_errors_total": "Total number of certificate read errors",
	}
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		want, ok := help[mf.GetName()]
		if !ok {
			continue
		}
		assert.Equal(t, want, mf.GetHelp())
		assert.Equal(t, dto.MetricType_COUNTER, mf.GetType())
		require.Len(t, mf.GetMetric(), 1)
		assert.Empty(t, mf.GetMetric()[0].GetLabel())
		out[mf.GetName()] = mf.GetMetric()[0].GetCounter().GetValue()
	}
	return out
}

// TestMetricsCountReads: with WithMetrics, every ReadCertificate counts in
// certwatcher_read_certificate_total and a failed one in ..._errors_total;
// a second watcher on the same registry counts into the same pair; a
// manager's UseDefaultMetrics does not replace WithMetrics's.
func TestMetricsCountReads(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := certwatcher.NewMetrics(reg)
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"certwatcher_read_certificate_total": 0, "certwatcher_read_certificate_errors_total": 0}, counters(t, reg), "served at 0")

	dir := t.TempDir()
	newPair(t, 1).write(t, dir)
	cw, err := certwatcher.New(paths(dir))
	require.NoError(t, err)
	cw.WithMetrics(m).WithLogger(quiet)
	assert.Equal(t, 1.0, counters(t, reg)["certwatcher_read_certificate_total"], "New's read, counted when the metrics are attached")
	cw.WithMetrics(m)
	assert.Equal(t, 1.0, counters(t, reg)["certwatcher_read_certificate_total"], "attaching the same metrics again adds nothing")
	require.NoError(t, cw.ReadCertificate())
	certPath, _ := paths(dir)
	require.NoError(t, os.Remove(certPath))
	require.Error(t, cw.ReadCertificate())
	assert.Equal(t, map[string]float64{"certwatcher_read_certificate_total": 3, "certwatcher_read_certificate_errors_total": 1}, counters(t, reg))

	other := t.TempDir()
	newPair(t, 2).write(t, other)
	cw2, err := certwatcher.New(paths(other))
	require.NoError(t, err)
	m2, err := certwatcher.NewMetrics(reg)
	require.NoError(t, err, "the registered counters are reused")
	cw2.UseDefaultMetrics(m2)
	require.NoError(t, cw2.ReadCertificate())
	assert.Equal(t, 5.0, counters(t, reg)["certwatcher_read_certificate_total"], "one pair per registry: cw2's New and ReadCertificate")

	cw.UseDefaultMetrics(nil) // does not undo WithMetrics
	require.Error(t, cw.ReadCertificate())
	assert.Equal(t, map[string]float64{"certwatcher_read_certificate_total": 6, "certwatcher_read_certificate_errors_total": 2}, counters(t, reg))

	cw.WithMetrics(nil)
	require.Error(t, cw.ReadCertificate())
	assert.Equal(t, 6.0, counters(t, reg)["certwatcher_read_certificate_total"], "WithMetrics(nil) stops counting")
}

func TestNewMetricsConflict(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "certwatcher_read_certificate_total", Help: "something else"}))
	_, err := certwatcher.NewMetrics(reg)
	assert.ErrorContains(t, err, "certwatcher: register metrics")
}
