//go:build soak

package reliability_test

import (
	"testing"
	"time"
)

// TestSoakRecoveryAfterALongOutage cuts the manager off for 90 s, then
// twice more briefly: however long the outage, every informer recovers
// within the bound, with at most two LISTs each. It takes two minutes, so
// it is built only with -tags soak:
//
//	go test -race -count=1 -tags soak -run TestSoakRecovery ./internal/reliability/
func TestSoakRecoveryAfterALongOutage(t *testing.T) {
	rig := newRecoveryRig(t)
	for _, tc := range []struct {
		f outageFault
		d time.Duration
	}{
		{blackhole, 90 * time.Second},
		{resetConns, time.Second},
		{unavailable, 20 * time.Second},
	} {
		took, lists := rig.outage(t, tc.f, tc.d)
		checkRecovery(t, tc.f.name+" "+tc.d.String(), took, lists)
	}
}
