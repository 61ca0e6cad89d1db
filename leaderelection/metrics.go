package leaderelection

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// statusMetric is leader_election_master_status{name}, the name
// client-go's component-base metrics and controller-runtime use.
type statusMetric struct {
	gauge prometheus.Gauge
}

// newStatusMetric registers the gauge on reg (reusing one already there)
// and sets it to 0. A nil reg yields a nil *statusMetric that does nothing.
func newStatusMetric(reg prometheus.Registerer, name string) (*statusMetric, error) {
	if reg == nil {
		return nil, nil
	}
	vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "leader_election_master_status",
		Help: "1 while this process holds the lease named by 'name', 0 while it is a standby.",
	}, []string{"name"})
	if err := reg.Register(vec); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, fmt.Errorf("leaderelection: register metrics: %w", err)
		}
		existing, ok := are.ExistingCollector.(*prometheus.GaugeVec)
		if !ok {
			return nil, fmt.Errorf("leaderelection: register metrics: %w", err)
		}
		vec = existing
	}
	m := &statusMetric{gauge: vec.WithLabelValues(name)}
	m.set(false)
	return m, nil
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
