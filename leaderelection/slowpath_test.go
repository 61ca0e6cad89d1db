package leaderelection_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// slowpath returns leader_election_slowpath_total{name=lease}, checking
// controller-runtime's help text and type.
func slowpath(t *testing.T, reg *prometheus.Registry, lease string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "leader_election_slowpath_total" {
			continue
		}
		assert.Equal(t, "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.", mf.GetHelp())
		assert.Equal(t, dto.MetricType_COUNTER, mf.GetType())
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) == 1 && m.GetLabel()[0].GetName() == "name" && m.GetLabel()[0].GetValue() == lease {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no leader_election_slowpath_total{name=%q}", lease)
	return 0
}

// TestSlowpathCounted: leader_election_slowpath_total{name} is served at 0
// and counts a renewal that had to read the Lease first because someone
// else wrote it since the leader's last renewal (its copy was stale), as
// client-go's elector counts its slow path. The leader keeps the lease.
func TestSlowpathCounted(t *testing.T) {
	lease := unique("slowpath")
	reg := prometheus.NewRegistry()
	e := newElector(t, lease, "a", true, reg)
	assert.Equal(t, 0.0, slowpath(t, reg, lease), "served at 0 before Run")
	done, cancel := run(e)
	defer func() {
		cancel()
		assert.NoError(t, <-done)
	}()
	waitElected(t, e, 10*time.Second)
	time.Sleep(3 * retryPeriod) // a few renewals from the leader's own copy
	assert.Equal(t, 0.0, slowpath(t, reg, lease), "renewals from its copy take the fast path")

	cs, err := kubernetes.NewForConfig(restConfig)
	require.NoError(t, err)
	// The leader renews every retryPeriod: an update read before a renewal
	// conflicts with it, so read again and retry, as any other writer does.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := cs.CoordinationV1().Leases("default").Get(t.Context(), lease, metav1.GetOptions{})
		if err != nil {
			return err
		}
		l.Annotations = map[string]string{"touched": "by the test"}
		_, err = cs.CoordinationV1().Leases("default").Update(t.Context(), l, metav1.UpdateOptions{})
		return err
	})
	require.NoError(t, err)

	require.Eventually(t, func() bool { return slowpath(t, reg, lease) >= 1 }, 10*time.Second, 20*time.Millisecond, "the slow path counted")
	assert.True(t, e.IsLeader(), "the leader kept the lease")
	assert.Equal(t, 1.0, gauge(t, reg, lease))
}
