package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func reconcileTime(t *testing.T, reg prometheus.Gatherer) *dto.Histogram {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == "controller_runtime_reconcile_time_seconds" {
			return mf.GetMetric()[0].GetHistogram()
		}
	}
	t.Fatal("no controller_runtime_reconcile_time_seconds")
	return nil
}

// TestNativeHistograms: through a registerer marked by
// WithNativeHistograms, controller_runtime_reconcile_time_seconds is a
// native histogram too, with controller-runtime's settings, and keeps its
// classic buckets; through a plain one it is exactly as before.
func TestNativeHistograms(t *testing.T) {
	plain := prometheus.NewRegistry()
	c, err := NewController(plain, "c")
	require.NoError(t, err)
	c.ReconcileTime.Observe(0.2)
	h := reconcileTime(t, plain)
	assert.Nil(t, h.Schema)
	assert.Len(t, h.GetBucket(), 40)

	reg := prometheus.NewRegistry()
	native := WithNativeHistograms(reg, 1.1)
	c, err = NewController(native, "c")
	require.NoError(t, err)
	c.ReconcileTime.Observe(0.2)
	h = reconcileTime(t, reg)
	require.NotNil(t, h.Schema)
	assert.Equal(t, int32(3), h.GetSchema())
	assert.NotEmpty(t, h.GetPositiveSpan())
	assert.Len(t, h.GetBucket(), 40, "the classic buckets stay")

	opts := HistogramOpts(native, prometheus.HistogramOpts{Name: "x"})
	assert.Equal(t, 1.1, opts.NativeHistogramBucketFactor)
	assert.Equal(t, uint32(100), opts.NativeHistogramMaxBucketNumber)
	assert.Equal(t, time.Hour, opts.NativeHistogramMinResetDuration)
	assert.Equal(t, prometheus.HistogramOpts{Name: "x"}, HistogramOpts(reg, prometheus.HistogramOpts{Name: "x"}))

	assert.Equal(t, prometheus.Registerer(reg), WithNativeHistograms(reg, 1), "a factor of 1 or less changes nothing")
	assert.Nil(t, WithNativeHistograms(nil, 1.1))
}
