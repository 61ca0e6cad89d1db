package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/metrics"
)

func TestRegistry(t *testing.T) {
	saved := metrics.Registry
	t.Cleanup(func() { metrics.Registry = saved })
	metrics.Registry = prometheus.NewRegistry()

	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "twice_total", Help: "Registered twice."})
	require.NoError(t, metrics.Registry.Register(c))
	err := metrics.Registry.Register(c)
	var already prometheus.AlreadyRegisteredError
	assert.ErrorAs(t, err, &already, "the second registration names the collector already there")
	assert.Panics(t, func() { metrics.Registry.MustRegister(c) })
	assert.True(t, metrics.Registry.Unregister(c))

	families, err := metrics.Registry.Gather()
	require.NoError(t, err)
	assert.Empty(t, families)
}

// Registry starts empty: kubeloop registers nothing on it.
func TestRegistryStartsEmpty(t *testing.T) {
	got, err := metrics.Registry.Gather()
	require.NoError(t, err)
	assert.Empty(t, got)
}
