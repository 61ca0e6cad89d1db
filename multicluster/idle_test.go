package multicluster_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

// TestIdleClusterRunsNoFleetGoroutine checks that once a cluster has
// synced, no goroutine of the fleet's own waits for it (its cache runs
// without one, its leaving is an AfterFunc), and that it still leaves
// cleanly: its controllers disengage and it is forgotten.
func TestIdleClusterRunsNoFleetGoroutine(t *testing.T) {
	p := newProvider()
	f := newFleet(t, p, nil)
	r := &reconciled{fleet: f}
	c := fleetController(t, f, r, controller.Options{})
	require.NoError(t, f.AddController(c))
	stopFleet := testenv.Start(f)
	stopCtrl := testenv.Start(c)
	configMap(t, cfgs[0], "idle")
	p.add(t, "idle", cfgs[0])
	eventually(t, func() bool { return f.Synced("idle") && r.saw("idle", "-idle") }, "the cluster syncs and reconciles")

	var fleetFrames []string
	require.Eventually(t, func() bool {
		fleetFrames = fleetFrames[:0]
		buf := make([]byte, 1<<20)
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "multicluster.(*engagement)") {
				fleetFrames = append(fleetFrames, g)
			}
		}
		return len(fleetFrames) == 0
	}, 10*time.Second, 20*time.Millisecond, "no goroutine of the fleet waits for an idle cluster")
	assert.Empty(t, fleetFrames)

	p.remove("idle")
	eventually(t, func() bool { return len(f.Clusters()) == 0 }, "the cluster leaves")
	require.NoError(t, stopCtrl())
	require.NoError(t, stopFleet())
}
