package controller

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// value returns a counter's or gauge's value, or a histogram's sample
// count. (prometheus/testutil would pull a module that go.sum lacks.)
func value(t *testing.T, m any) float64 {
	t.Helper()
	var d dto.Metric
	require.NoError(t, m.(prometheus.Metric).Write(&d))
	return metricValue(&d)
}

func metricValue(d *dto.Metric) float64 {
	switch {
	case d.Counter != nil:
		return d.Counter.GetValue()
	case d.Gauge != nil:
		return d.Gauge.GetValue()
	case d.Histogram != nil:
		return float64(d.Histogram.GetSampleCount())
	}
	return 0
}

// gather returns every series of reg as `name{k="v",...}` -> value.
func gather(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			slices.Sort(labels)
			out[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = metricValue(m)
		}
	}
	return out
}
