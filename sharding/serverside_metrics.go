package sharding

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// serverSideMetrics are ServerSide mode's collectors, beside the ring's
// (metrics.go), on the same registry.
type serverSideMetrics struct {
	segments *prometheus.GaugeVec
	moves    *prometheus.CounterVec
}

func newServerSideMetrics(reg prometheus.Registerer, ring string) (*serverSideMetrics, error) {
	m := &serverSideMetrics{
		segments: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kubeloop_sharding_segments",
			Help: "Hash segments (of 127) this shard admits reconciles in, in ServerSide mode.",
		}, []string{"ring", "shard"}),
		moves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubeloop_sharding_segment_moves_total",
			Help: "Hash segments this shard took (direction in) or gave up (out), in ServerSide mode.",
		}, []string{"ring", "direction"}),
	}
	if reg == nil {
		return m, nil
	}
	if err := spec.Register(reg, ring, m.segments, m.moves); err != nil {
		return nil, err
	}
	return m, nil
}
