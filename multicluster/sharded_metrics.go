package multicluster

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	heldDesc = prometheus.NewDesc("kubeloop_multicluster_sharded_held_clusters",
		"Clusters of the fleet this replica holds (engages and reconciles), the manager's own cluster not counted.",
		[]string{"shard"}, nil)
	placedDesc = prometheus.NewDesc("kubeloop_multicluster_sharded_placed_clusters",
		"Clusters of the fleet the last placement gave this replica's shard; above held while a previous owner drains.",
		[]string{"shard"}, nil)
	drainsDesc = prometheus.NewDesc("kubeloop_multicluster_sharded_drains_total",
		"Clusters of the fleet this replica drained: moved to another shard, left, or dropped with the shard's Lease.",
		[]string{"shard"}, nil)
)

// shardedMetrics are a Sharded's counters.
type shardedMetrics struct {
	drains atomic.Int64
}

// shardedCollector reports a Sharded's metrics at scrape time.
type shardedCollector struct{ s *Sharded }

var _ prometheus.Collector = (*shardedCollector)(nil)

// Describe sends the metrics' descriptions.
func (c *shardedCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- heldDesc
	ch <- placedDesc
	ch <- drainsDesc
}

// Collect sends the held and placed gauges and the drain counter.
func (c *shardedCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	shard := s.ring.Shard()
	s.mu.Lock()
	held := len(s.held)
	if s.held[""] != nil {
		held--
	}
	placed := 0
	for c, sh := range s.placement {
		if sh == shard && c != "" {
			placed++
		}
	}
	s.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(heldDesc, prometheus.GaugeValue, float64(held), shard)
	ch <- prometheus.MustNewConstMetric(placedDesc, prometheus.GaugeValue, float64(placed), shard)
	ch <- prometheus.MustNewConstMetric(drainsDesc, prometheus.CounterValue, float64(s.metrics.drains.Load()), shard)
}
