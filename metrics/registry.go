package metrics

import "github.com/prometheus/client_golang/prometheus"

// RegistererGatherer is both halves of a Prometheus registry: collectors
// are registered through it and gathered from it.
type RegistererGatherer interface {
	prometheus.Registerer
	prometheus.Gatherer
}

var _ RegistererGatherer = (*prometheus.Registry)(nil)

// Registry is the process-wide registry that every manager also serves on
// /metrics (see the package doc). It is empty at start.
var Registry RegistererGatherer = prometheus.NewRegistry()
