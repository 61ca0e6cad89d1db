package leaderelection_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/leaderelection"
)

// Fast timings for tests against the real API server.
const (
	leaseDuration = 3 * time.Second
	renewDeadline = 2 * time.Second
	retryPeriod   = 250 * time.Millisecond
)

func newElector(t *testing.T, lease, identity string, release bool, reg prometheus.Registerer) *leaderelection.Elector {
	t.Helper()
	e, err := leaderelection.New(restConfig, leaderelection.Options{
		ID:              lease,
		Namespace:       "default",
		Identity:        identity,
		LeaseDuration:   leaseDuration,
		RenewDeadline:   renewDeadline,
		RetryPeriod:     retryPeriod,
		ReleaseOnCancel: release,
		Metrics:         reg,
	})
	require.NoError(t, err)
	return e
}

// unique returns prefix with a random suffix, so that repeated runs
// (-count) against the same control plane do not share leases.
func unique(prefix string) string {
	return prefix + "-" + string(uuid.NewUUID())[:8]
}

// run starts e.Run in a goroutine and returns its result channel and the
// cancel of its context.
func run(e *leaderelection.Elector) (<-chan error, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	return done, cancel
}

func waitElected(t *testing.T, e *leaderelection.Elector, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-e.Elected():
		return time.Since(start)
	case <-time.After(within):
		t.Fatalf("%s not elected within %s", e.Identity(), within)
		return 0
	}
}

func gauge(t *testing.T, reg *prometheus.Registry, lease string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "leader_election_master_status" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == lease {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no leader_election_master_status{name=%q}", lease)
	return 0
}

func TestReleaseOnCancelHandsOver(t *testing.T) {
	lease := unique("release-hand-over")
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	a := newElector(t, lease, "a", true, regA)
	b := newElector(t, lease, "b", false, regB)

	doneA, cancelA := run(a)
	waitElected(t, a, 10*time.Second)
	assert.True(t, a.IsLeader())
	assert.Equal(t, 1.0, gauge(t, regA, lease))

	doneB, cancelB := run(b)
	defer func() {
		cancelB()
		assert.NoError(t, <-doneB)
	}()
	// B keeps trying while A renews: several retries, no takeover.
	time.Sleep(4 * retryPeriod)
	select {
	case <-b.Elected():
		t.Fatal("b elected while a holds the lease")
	default:
	}
	assert.Equal(t, 0.0, gauge(t, regB, lease))

	cancelA()
	require.NoError(t, <-doneA, "a cancelled: Run returns nil")
	assert.False(t, a.IsLeader())
	assert.Equal(t, 0.0, gauge(t, regA, lease))

	took := waitElected(t, b, 3*(2*retryPeriod)+2*time.Second)
	t.Logf("b took over %s after a released the lease (RetryPeriod %s)", took, retryPeriod)
	assert.Less(t, took, leaseDuration, "a released lease is taken before it would have expired")
	assert.Equal(t, 1.0, gauge(t, regB, lease))

	cs := kubernetes.NewForConfigOrDie(restConfig)
	l, err := cs.CoordinationV1().Leases("default").Get(context.Background(), lease, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "b", ptr.Deref(l.Spec.HolderIdentity, ""))
	assert.EqualValues(t, 1, ptr.Deref(l.Spec.LeaseTransitions, 0), "a acquired a fresh lease, b took it once")
}

func TestLostLeaseEndsRun(t *testing.T) {
	lease := unique("lost-lease")
	a := newElector(t, lease, "a", true, nil)
	done, cancel := run(a)
	defer cancel()
	waitElected(t, a, 10*time.Second)
	left, err := a.Remaining()
	require.NoError(t, err, "the leader's fence admits writes")
	assert.LessOrEqual(t, left, renewDeadline)

	// An intruder takes the lease for a minute.
	cs := kubernetes.NewForConfigOrDie(restConfig)
	ctx := context.Background()
	require.Eventually(t, func() bool {
		l, err := cs.CoordinationV1().Leases("default").Get(ctx, lease, metav1.GetOptions{})
		if err != nil {
			return false
		}
		l.Spec = coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("intruder"),
			LeaseDurationSeconds: ptr.To[int32](60),
			AcquireTime:          &metav1.MicroTime{Time: time.Now()},
			RenewTime:            &metav1.MicroTime{Time: time.Now()},
		}
		_, err = cs.CoordinationV1().Leases("default").Update(ctx, l, metav1.UpdateOptions{})
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	stolen := time.Now()

	select {
	case err := <-done:
		t.Logf("loss detected %s after the lease was taken (RenewDeadline %s)", time.Since(stolen), renewDeadline)
		require.Error(t, err)
		assert.True(t, errors.Is(err, leaderelection.ErrLeaderElectionLost))
		assert.ErrorIs(t, err, client.ErrLeaseLost, "the lease core's sentinel, as fenced writes wrap it")
		assert.Equal(t, "lease default/"+lease+": leaderelection: leadership lost (lease lost)", err.Error())
	case <-time.After(3 * (renewDeadline + retryPeriod)):
		t.Fatal("loss not detected")
	}
	assert.False(t, a.IsLeader())
	_, err = a.Remaining()
	require.ErrorIs(t, err, client.ErrLeaseLost, "the deposed leader's fence refuses writes")
	assert.Contains(t, err.Error(), "lease default/"+lease)

	// A deposed leader does not release someone else's lease.
	a.Release(ctx)
	l, err := cs.CoordinationV1().Leases("default").Get(ctx, lease, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "intruder", ptr.Deref(l.Spec.HolderIdentity, ""))
}

func TestRunTwice(t *testing.T) {
	e := newElector(t, unique("run-twice"), "a", false, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, e.Run(ctx), "a cancelled context ends Run with nil")
	err := e.Run(ctx)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "Run called more than once"), err.Error())
}

func TestNewRejectsBadOptions(t *testing.T) {
	_, err := leaderelection.New(restConfig, leaderelection.Options{Namespace: "default", LeaseDuration: time.Second, RenewDeadline: 2 * time.Second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ID (the Lease name) is required")
	assert.Contains(t, err.Error(), "LeaseDuration 1s must be greater than RenewDeadline 2s")
}
