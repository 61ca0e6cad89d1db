package multicluster

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// ReadyCheck is the fleet's readiness check (the manager serves it as
// "clusters"): nil while every engaged cluster's cache has synced and its
// informers work; otherwise an error naming each cluster that has not
// (`cluster "east": caches have not synced yet ...`). A cluster that is
// unreachable shows here only: the manager's own "cache" check and the
// other clusters are not held back by it.
func (f *Fleet) ReadyCheck(*http.Request) error {
	f.mu.Lock()
	es := f.engagementsLocked()
	f.mu.Unlock()
	slices.SortFunc(es, func(a, b *engagement) int { return strings.Compare(a.cl.name, b.cl.name) })
	var errs []error
	for _, e := range es {
		errs = append(errs, e.health())
	}
	return errors.Join(errs...)
}

// Synced reports whether the engaged cluster name's cache has synced;
// false for a cluster that is not engaged.
func (f *Fleet) Synced(name string) bool {
	f.mu.Lock()
	e := f.clusters[name]
	f.mu.Unlock()
	return e != nil && e.isSynced()
}

var (
	clusterSyncedDesc = prometheus.NewDesc("kubeloop_multicluster_cluster_synced",
		"1 once the engaged cluster's cache has synced, 0 before; a cluster that left has no series",
		[]string{"cluster"}, nil)
	engagementsDesc = prometheus.NewDesc("kubeloop_multicluster_engagements_total",
		"Clusters engaged by the fleet's provider, re-engagements included", nil, nil)
	disengagementsDesc = prometheus.NewDesc("kubeloop_multicluster_disengagements_total",
		"Clusters that left the fleet (their caches and watches stopped)", nil, nil)
)

// collector reports the fleet's metrics at scrape time, so that a
// cluster's series go with it when it leaves.
type collector struct{ f *Fleet }

var _ prometheus.Collector = (*collector)(nil)

// Describe sends the metrics' descriptions.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- clusterSyncedDesc
	ch <- engagementsDesc
	ch <- disengagementsDesc
}

// Collect sends one synced sample per engaged cluster and the counters.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.f.mu.Lock()
	es := c.f.engagementsLocked()
	c.f.mu.Unlock()
	for _, e := range es {
		v := 0.0
		if e.isSynced() {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(clusterSyncedDesc, prometheus.GaugeValue, v, e.cl.name)
	}
	ch <- prometheus.MustNewConstMetric(engagementsDesc, prometheus.CounterValue, float64(c.f.engages.Load()))
	ch <- prometheus.MustNewConstMetric(disengagementsDesc, prometheus.CounterValue, float64(c.f.disengage.Load()))
}
