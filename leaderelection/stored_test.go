package leaderelection_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/leaderelection"
)

// candidate is one elector behind its own fault proxy, and when it led:
// from Elected until Run returned (when a manager stops leader-only work).
type candidate struct {
	e        *leaderelection.Elector
	proxy    *faultproxy.Proxy
	cancel   context.CancelFunc
	finished chan struct{} // closed when Run has returned
	led      chan struct{} // closed once elected is set

	mu      sync.Mutex
	elected time.Time // zero until elected
	ended   time.Time // when Run returned
	err     error     // Run's
}

func startCandidate(t *testing.T, lease, identity string, lease1, renew, retry time.Duration) *candidate {
	t.Helper()
	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	e, err := leaderelection.New(p.Config(), leaderelection.Options{
		ID: lease, Namespace: "default", Identity: identity,
		LeaseDuration: lease1, RenewDeadline: renew, RetryPeriod: retry,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	c := &candidate{e: e, proxy: p, cancel: cancel, finished: make(chan struct{}), led: make(chan struct{})}
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-e.Elected():
			c.mu.Lock()
			c.elected = time.Now()
			c.mu.Unlock()
			close(c.led)
		case <-ctx.Done():
		}
	}()
	go func() {
		err := e.Run(ctx)
		c.mu.Lock()
		c.ended, c.err = time.Now(), err
		c.mu.Unlock()
		cancel()
		<-watched
		close(c.finished)
	}()
	t.Cleanup(func() {
		cancel()
		<-c.finished
	})
	return c
}

func (c *candidate) times() (elected, ended time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.elected, c.ended
}

// waitLed waits until c has been elected and returns when.
func (c *candidate) waitLed(t *testing.T, within time.Duration) time.Time {
	t.Helper()
	select {
	case <-c.led:
	case <-time.After(within): // hang bound
		t.Fatalf("%s not elected within %s", c.e.Identity(), within)
	}
	elected, _ := c.times()
	return elected
}

func (c *candidate) runErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// TestNeverTwoLeadersWithFractionalTimings hands the lease over several
// times, each time by cutting the leader off the API server, with a
// fractional LeaseDuration (stored in whole seconds) and a sub-second
// RetryPeriod: the next leader is elected only after the previous one's
// Run returned. With LeaseDuration truncated to whole seconds (1.9s
// stored as 1s, below RenewDeadline 1.5s) the standby took over while the
// leader still led.
func TestNeverTwoLeadersWithFractionalTimings(t *testing.T) {
	settings := []struct {
		lease, renew, retry time.Duration
		stored              int32
	}{
		{lease: 1900 * time.Millisecond, renew: 1500 * time.Millisecond, retry: 200 * time.Millisecond, stored: 2},
		{lease: 1200 * time.Millisecond, renew: 1000 * time.Millisecond, retry: 300 * time.Millisecond, stored: 2},
	}
	cs := kubernetes.NewForConfigOrDie(restConfig)
	for _, st := range settings {
		t.Run(fmt.Sprintf("%s-%s-%s", st.lease, st.renew, st.retry), func(t *testing.T) {
			lease := unique("fractional")
			const rounds = 3
			leader := startCandidate(t, lease, "c0", st.lease, st.renew, st.retry)
			leader.waitLed(t, 20*time.Second)
			l, err := cs.CoordinationV1().Leases("default").Get(t.Context(), lease, metav1.GetOptions{})
			require.NoError(t, err)
			assert.Equal(t, st.stored, ptr.Deref(l.Spec.LeaseDurationSeconds, 0), "leaseDurationSeconds is LeaseDuration rounded up")
			for i := 1; i <= rounds; i++ {
				standby := startCandidate(t, lease, fmt.Sprintf("c%d", i), st.lease, st.renew, st.retry)
				time.Sleep(3 * st.retry) // the standby has seen the lease renewed
				leader.proxy.Blackhole(true)
				select {
				case <-leader.finished:
					err := leader.runErr()
					assert.True(t, errors.Is(err, leaderelection.ErrLeaderElectionLost), "the cut-off leader lost the lease: %v", err)
				case <-time.After(20 * time.Second): // hang bound
					t.Fatalf("round %d: the cut-off leader never stopped", i)
				}
				elected := standby.waitLed(t, 20*time.Second)
				_, ended := leader.times()
				t.Logf("round %d: leader stopped at %s, standby elected %s later", i, ended.Format("05.000"), elected.Sub(ended))
				assert.False(t, elected.Before(ended), "round %d: two leaders for %s", i, ended.Sub(elected))
				leader.proxy.Blackhole(false)
				leader = standby
			}
		})
	}
}

// TestStandbyWaitsTheStoredDuration checks that a standby judges expiry by
// the Lease's leaseDurationSeconds, not by its own LeaseDuration.
func TestStandbyWaitsTheStoredDuration(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(restConfig)
	holdSkewed := func(t *testing.T, lease string, seconds int32, skew time.Duration) time.Time {
		t.Helper()
		now := metav1.NewMicroTime(time.Now().Add(skew))
		_, err := cs.CoordinationV1().Leases("default").Create(t.Context(), &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: lease, Namespace: "default"},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To("gone"), LeaseDurationSeconds: ptr.To(seconds),
				AcquireTime: &now, RenewTime: &now,
			},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		return now.Time.Add(-skew)
	}
	hold := func(t *testing.T, lease string, seconds int32) time.Time {
		t.Helper()
		return holdSkewed(t, lease, seconds, 0)
	}
	t.Run("stored longer than the option", func(t *testing.T) {
		lease := unique("stored-longer")
		written := hold(t, lease, 4)
		c := startCandidate(t, lease, "standby", time.Second, 500*time.Millisecond, 100*time.Millisecond)
		elected := c.waitLed(t, 20*time.Second)
		t.Logf("elected %s after the lease was last renewed (stored 4s, own 1s)", elected.Sub(written))
		assert.GreaterOrEqual(t, elected.Sub(written), 4*time.Second, "the standby waited the stored 4s, not its own 1s")
	})
	// The holder's clock is off by an hour: its renewTime says nothing to
	// a standby, which waits the stored duration from when it saw the
	// Lease (a standby comparing renewTime with its own clock would take
	// over at once, or only after an hour).
	for _, skew := range []time.Duration{-time.Hour, time.Hour} {
		t.Run(fmt.Sprintf("holder clock off by %s", skew), func(t *testing.T) {
			lease := unique("skewed")
			written := holdSkewed(t, lease, 2, skew)
			c := startCandidate(t, lease, "standby", time.Second, 500*time.Millisecond, 100*time.Millisecond)
			elected := c.waitLed(t, 30*time.Second)
			t.Logf("elected %s after the lease was written (stored 2s, holder's clock off by %s)", elected.Sub(written), skew)
			assert.GreaterOrEqual(t, elected.Sub(written), 2*time.Second)
			assert.Less(t, elected.Sub(written), 20*time.Second)
		})
	}
	t.Run("stored shorter than the option", func(t *testing.T) {
		lease := unique("stored-shorter")
		written := hold(t, lease, 1)
		c := startCandidate(t, lease, "standby", time.Minute, 500*time.Millisecond, 100*time.Millisecond)
		elected := c.waitLed(t, 30*time.Second)
		t.Logf("elected %s after the lease was last renewed (stored 1s, own 1m)", elected.Sub(written))
		assert.GreaterOrEqual(t, elected.Sub(written), time.Second)
		assert.Less(t, elected.Sub(written), time.Minute, "the standby took over after the stored 1s, not its own minute")
	})
}

// TestStandbyTakesOverOnlyAfterTheLeaderStoppedBeingValid: two
// contenders with fractional timings; the leader is cut off from the API
// server; the standby is elected only after the leader's IsLeader (the
// lease core's Valid, which fenced writes ask) turned false.
func TestStandbyTakesOverOnlyAfterTheLeaderStoppedBeingValid(t *testing.T) {
	const d, renew, retry = 1900 * time.Millisecond, 1500 * time.Millisecond, 200 * time.Millisecond
	lease := unique("valid-then-takeover")
	leader := startCandidate(t, lease, "leader", d, renew, retry)
	leader.waitLed(t, 20*time.Second)
	standby := startCandidate(t, lease, "standby", d, renew, retry)

	// Poll the leader's IsLeader, remembering the last time it said yes.
	var lastValid atomic.Int64 // UnixNano
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if leader.e.IsLeader() {
				lastValid.Store(time.Now().UnixNano())
			}
			time.Sleep(time.Millisecond)
		}
	}()
	time.Sleep(3 * retry) // the standby has seen renewals
	require.True(t, leader.e.IsLeader())
	cut := time.Now()
	leader.proxy.Blackhole(true)
	defer leader.proxy.Blackhole(false)

	elected := standby.waitLed(t, 20*time.Second)
	close(stop)
	<-polled
	last := time.Unix(0, lastValid.Load())
	t.Logf("cut off at %s; leader last valid %s later; standby elected %s after that",
		cut.Format("05.000"), last.Sub(cut), elected.Sub(last))
	assert.True(t, last.Before(elected), "the standby was elected %s before the leader stopped being valid", last.Sub(elected))
	assert.Less(t, last.Sub(cut), renew, "validity ends within RenewDeadline of the last renewal")
	assert.False(t, leader.e.IsLeader())
	select {
	case <-leader.finished:
		assert.ErrorIs(t, leader.runErr(), leaderelection.ErrLeaderElectionLost)
	case <-time.After(10 * time.Second): // hang bound
		t.Fatal("the cut-off leader's Run did not return")
	}
}
