package manager

import (
	"errors"
	"sort"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"

	"github.com/kubeloop/kubeloop/certwatcher"
	"github.com/kubeloop/kubeloop/metrics"
)

// newRegistry returns the manager's own registry with the Go and process
// collectors, and certwatcher's read counters at 0 (controller-runtime
// serves them from the start).
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if _, err := certwatcher.NewMetrics(reg); err != nil {
		panic(err) // a new registry holds no other collector of these names
	}
	return reg
}

// useRegistry lets a runnable that counts into the manager's registry do
// so: a certwatcher.CertWatcher added without WithMetrics (the kubebuilder
// scaffold's mgr.Add(certWatcher)) counts its reads in the manager's
// certwatcher_read_certificate_total and ..._errors_total.
func (m *Manager) useRegistry(r Runnable) {
	if cw, ok := r.(*certwatcher.CertWatcher); ok {
		if cm, err := certwatcher.NewMetrics(m.registry); err == nil { // newRegistry's counters
			cw.UseDefaultMetrics(cm)
		}
	}
}

// gatherer is what /metrics serves: the manager's own registry and the
// process-wide metrics.Registry (read at each scrape), merged by
// mergeFamilies.
func (m *Manager) gatherer() prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		own, err := m.registry.Gather()
		if metrics.Registry == nil {
			return own, err
		}
		global, gerr := metrics.Registry.Gather()
		return mergeFamilies(own, global), errors.Join(err, gerr)
	})
}

// mergeFamilies returns own plus the families of global whose names own
// does not have, sorted by name. The manager's series win: a family on
// both registries (a user who also registered the Go collector on
// metrics.Registry) is served once, from own, instead of failing the
// scrape as prometheus.Gatherers would on the duplicate series.
func mergeFamilies(own, global []*dto.MetricFamily) []*dto.MetricFamily {
	if len(global) == 0 {
		return own
	}
	seen := make(map[string]bool, len(own))
	for _, mf := range own {
		seen[mf.GetName()] = true
	}
	out := append(make([]*dto.MetricFamily, 0, len(own)+len(global)), own...)
	for _, mf := range global {
		if !seen[mf.GetName()] {
			out = append(out, mf)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}
