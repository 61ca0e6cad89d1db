package metrics

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// register registers c on reg and returns the collector that is in effect:
// c itself, or the equal collector registered before (so that several
// controllers share one vector). A nil reg leaves c unregistered.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if reg == nil {
		return c, nil
	}
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
		return c, fmt.Errorf("metrics: a different collector is registered under the same name: %w", err)
	}
	return c, fmt.Errorf("metrics: register: %w", err)
}
