package builder_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/handler"
)

type handlerQueue = handler.Queue

// gatherValues returns every series of the manager's registry as
// `name{k="v",...}` -> value (histograms: sample count).
func gatherValues(t *testing.T, m *testManager) map[string]float64 {
	t.Helper()
	mfs, err := m.reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, met := range mf.GetMetric() {
			var labels []string
			for _, l := range met.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			slices.Sort(labels)
			v := 0.0
			switch {
			case met.Counter != nil:
				v = met.Counter.GetValue()
			case met.Gauge != nil:
				v = met.Gauge.GetValue()
			case met.Histogram != nil:
				v = float64(met.Histogram.GetSampleCount())
			}
			out[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	return out
}
