package sharding

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
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
	for _, c := range []prometheus.Collector{m.segments, m.moves} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, fmt.Errorf("%w: ring %q: sharding metrics are already registered (a manager runs one ring)", ErrOtherRing, ring)
			}
			return nil, fmt.Errorf("sharding: ring %q: register metrics: %w", ring, err)
		}
	}
	return m, nil
}
