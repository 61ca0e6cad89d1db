package leaderelection

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// statusMetric holds the elector's series, under the names, help texts
// and labels of client-go's component-base metrics and controller-runtime:
// leader_election_master_status{name} and
// leader_election_slowpath_total{name}.
type statusMetric struct {
	gauge    prometheus.Gauge
	slowpath prometheus.Counter
}

// newStatusMetric registers the gauge and the counter on reg (reusing ones
// already there) and sets both to 0. A nil reg yields a nil *statusMetric
// that does nothing.
func newStatusMetric(reg prometheus.Registerer, name string) (*statusMetric, error) {
	if reg == nil {
		return nil, nil
	}
	gauges, err := register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "leader_election_master_status",
		Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
	}, []string{"name"}))
	if err != nil {
		return nil, err
	}
	counters, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "leader_election_slowpath_total",
		Help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
	}, []string{"name"}))
	if err != nil {
		return nil, err
	}
	m := &statusMetric{gauge: gauges.WithLabelValues(name), slowpath: counters.WithLabelValues(name)}
	m.set(false)
	return m, nil
}

// register registers c on reg, or returns the collector of the same kind
// registered there before.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("leaderelection: register metrics: %w", err)
}

func (m *statusMetric) set(leading bool) {
	if m == nil {
		return
	}
	if leading {
		m.gauge.Set(1)
	} else {
		m.gauge.Set(0)
	}
}

// slowPath returns the lease core's SlowPath hook: it counts a renewal
// that had to read the Lease first (client-go's slow path). Nil without
// metrics.
func (m *statusMetric) slowPath() func() {
	if m == nil {
		return nil
	}
	return m.slowpath.Inc
}
