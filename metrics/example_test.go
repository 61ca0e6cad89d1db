package metrics_test

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeloop/kubeloop/metrics"
)

// A ported operator registers its collectors on metrics.Registry in an
// init(), as with controller-runtime; every manager serves them on
// /metrics beside its own series.
func Example() {
	reconciles := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "myoperator_reconciles_total",
		Help: "Reconciles of my operator, by result.",
	}, []string{"result"})
	metrics.Registry.MustRegister(reconciles)     // in init()
	defer metrics.Registry.Unregister(reconciles) // only so the example can run again

	reconciles.WithLabelValues("ok").Add(2)

	families, err := metrics.Registry.Gather()
	if err != nil {
		panic(err)
	}
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			fmt.Println(mf.GetName(), m.GetLabel()[0].GetValue(), m.GetCounter().GetValue())
		}
	}
	// Output: myoperator_reconciles_total ok 2
}
