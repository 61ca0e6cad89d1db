package spec

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the ring's collectors. Every one has the label "ring"; a
// second ring on one registry fails to register them.
type Metrics struct {
	Shards      *prometheus.GaugeVec
	Objects     *prometheus.GaugeVec
	Moves       *prometheus.CounterVec
	Assignments *prometheus.CounterVec
	Drain       *prometheus.HistogramVec
	LeaseHeld   *prometheus.GaugeVec
	Leading     *prometheus.GaugeVec
	Sweep       *prometheus.HistogramVec
	Losses      *prometheus.CounterVec
	Rejoins     *prometheus.CounterVec
	Rejoin      *prometheus.HistogramVec
}

// NewMetrics makes the ring's collectors and registers them with reg
// (nil: none).
func NewMetrics(reg prometheus.Registerer, ring string) (*Metrics, error) {
	m := &Metrics{
		Shards: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kubeloop_sharding_shards_alive",
			Help: "Shards of the ring whose Lease is valid, as this replica last read them.",
		}, []string{"ring"}),
		Objects: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kubeloop_sharding_objects",
			Help: "Sharded objects per shard at the end of the sharder's last complete sweep (set on the sharder replica).",
		}, []string{"ring", "shard"}),
		Moves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubeloop_sharding_moves_total",
			Help: "Moves of objects between shards: drain (a drain requested by the sharder), lost (reassigned from a shard that is gone), handover (a drain acknowledged by this shard).",
		}, []string{"ring", "reason"}),
		Assignments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubeloop_sharding_assignments_total",
			Help: "Unassigned objects given a shard, by the webhook or by the sweep.",
		}, []string{"ring", "by"}),
		Drain: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kubeloop_sharding_drain_seconds",
			Help:    "Time from the sharder's drain request to this shard's acknowledgment.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"ring"}),
		LeaseHeld: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kubeloop_sharding_shard_lease_held",
			Help: "1 while this replica holds its shard Lease.",
		}, []string{"ring", "shard"}),
		Leading: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kubeloop_sharding_sharder_leading",
			Help: "1 while this replica runs the ring's sharder.",
		}, []string{"ring"}),
		Sweep: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kubeloop_sharding_sweep_seconds",
			Help:    "Duration of the sharder's sweeps over the sharded objects.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2.5, 10),
		}, []string{"ring"}),
		Losses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubeloop_sharding_shard_lease_losses_total",
			Help: "Times this replica lost its shard Lease (not renewed within RenewDeadline).",
		}, []string{"ring", "shard"}),
		Rejoins: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kubeloop_sharding_rejoins_total",
			Help: "Times this replica rejoined the ring after losing its shard Lease and admitted reconciles again.",
		}, []string{"ring", "shard"}),
		Rejoin: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kubeloop_sharding_rejoin_seconds",
			Help:    "Time from the loss of the shard Lease to admitting reconciles again.",
			Buckets: []float64{0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300},
		}, []string{"ring"}),
	}
	if reg == nil {
		return m, nil
	}
	if err := Register(reg, ring, m.Shards, m.Objects, m.Moves, m.Assignments, m.Drain, m.LeaseHeld, m.Leading, m.Sweep, m.Losses, m.Rejoins, m.Rejoin); err != nil {
		return nil, err
	}
	return m, nil
}

// Register registers the ring's collectors with reg; a collector already
// there means a second ring on one registry (ErrOtherRing).
func Register(reg prometheus.Registerer, ring string, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return fmt.Errorf("%w: ring %q: sharding metrics are already registered (a manager runs one ring)", ErrOtherRing, ring)
			}
			return fmt.Errorf("sharding: ring %q: register metrics: %w", ring, err)
		}
	}
	return nil
}
