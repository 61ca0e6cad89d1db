package manager

import (
	"github.com/prometheus/client_golang/prometheus"

	imetrics "github.com/kubeloop/kubeloop/internal/metrics"
)

// Metrics returns the registerer of the manager's own registry, served at
// /metrics. Register your collectors here. With
// MetricsOptions.NativeHistogramBucketFactor, the library's histograms
// built for it are native histograms too.
func (m *Manager) Metrics() prometheus.Registerer {
	return imetrics.WithNativeHistograms(m.registry, m.opts.Metrics.NativeHistogramBucketFactor)
}
