package manager_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/leaderelection"
	"github.com/kubeloop/kubeloop/manager"
)

// activity records when each manager's leader-only runnable was active and
// counts how many were active at once.
type activity struct {
	mu        sync.Mutex
	active    int
	maxActive int
	intervals []interval
	started   chan string
}

type interval struct {
	who        string
	start, end time.Time
}

func newActivity() *activity { return &activity{started: make(chan string, 16)} }

func (a *activity) runnable(who string) manager.Runnable {
	return manager.RunnableFunc(func(ctx context.Context) error {
		a.mu.Lock()
		a.active++
		a.maxActive = max(a.maxActive, a.active)
		i := len(a.intervals)
		a.intervals = append(a.intervals, interval{who: who, start: time.Now()})
		a.mu.Unlock()
		a.started <- who

		<-ctx.Done()
		// Finishing in-flight work for longer than a standby's retry: a
		// lease released before this returns would let the next leader
		// start while this one still acts.
		time.Sleep(4 * retryPeriod)

		a.mu.Lock()
		a.active--
		a.intervals[i].end = time.Now()
		a.mu.Unlock()
		return nil
	})
}

func (a *activity) snapshot() (maxActive int, intervals []interval) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.maxActive, append([]interval(nil), a.intervals...)
}

// next waits for the next leader-only runnable to start.
func (a *activity) next(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case who := <-a.started:
		return who
	case <-time.After(within):
		t.Fatalf("no leader within %s", within)
		return ""
	}
}

func electionOptions(lease string, release bool) manager.Options {
	return manager.Options{
		LeaderElection:                true,
		LeaderElectionID:              lease,
		LeaderElectionNamespace:       "default",
		LeaseDuration:                 leaseDuration,
		RenewDeadline:                 renewDeadline,
		RetryPeriod:                   retryPeriod,
		LeaderElectionReleaseOnCancel: release,
	}
}

func masterStatus(t *testing.T, mgr *manager.Manager) float64 {
	t.Helper()
	mfs, err := mgr.MetricsRegistry().Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == "leader_election_master_status" {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("no leader_election_master_status")
	return 0
}

func TestOneLeaderAmongThree(t *testing.T) {
	lease := unique("one-of-three")
	act := newActivity()
	mgrs := map[string]*running{}
	standbyWork := map[string]*blocking{}
	l := &log{}
	for _, who := range []string{"a", "b", "c"} {
		// a crashes (no release); b and c release on a normal stop.
		mgr := newManager(t, restConfig, electionOptions(lease, who != "a"))
		_, err := mgr.GetCache().GetInformer(context.Background(), &corev1.ConfigMap{})
		require.NoError(t, err)
		require.NoError(t, mgr.Add(act.runnable(who)))
		standbyWork[who] = newBlocking("other-"+who, l)
		require.NoError(t, mgr.Add(leaderAware{standbyWork[who], false}))
		if who == "a" {
			mgrs[who] = start(mgr)
			require.Equal(t, "a", act.next(t, 30*time.Second), "a starts alone and leads")
			continue
		}
		mgrs[who] = start(mgr)
	}

	// Standbys are warm: caches synced and their other runnables running,
	// while their leader-only runnables wait.
	for _, who := range []string{"b", "c"} {
		waitClosed(t, standbyWork[who].started, 30*time.Second, "standby "+who+" runs its other runnables")
		assert.Zero(t, masterStatus(t, mgrs[who].mgr), "standby %s reports itself as not leading", who)
	}
	assert.Equal(t, 1.0, masterStatus(t, mgrs["a"].mgr))
	time.Sleep(4 * retryPeriod) // several campaign rounds of the standbys
	maxActive, _ := act.snapshot()
	require.Equal(t, 1, maxActive)

	// a crashes: its context ends without releasing the lease.
	require.NoError(t, mgrs["a"].stop(t))
	second := act.next(t, 3*(leaseDuration+retryPeriod))
	_, iv := act.snapshot()
	crashHandover := iv[1].start.Sub(iv[0].end)
	t.Logf("crashed leader a replaced by %s after %s (LeaseDuration %s, RetryPeriod %s)", second, crashHandover, leaseDuration, retryPeriod)
	assert.Less(t, crashHandover, 3*(leaseDuration+retryPeriod))
	assert.Greater(t, crashHandover, leaseDuration/2, "without a release the standby waits for the lease to expire")

	// The second leader stops normally and releases the lease.
	third := map[string]string{"b": "c", "c": "b"}[second]
	require.NoError(t, mgrs[second].stop(t))
	require.Equal(t, third, act.next(t, 3*(leaseDuration+retryPeriod)))
	_, iv = act.snapshot()
	releaseHandover := iv[2].start.Sub(iv[1].end)
	t.Logf("releasing leader %s replaced by %s after %s (RetryPeriod %s)", second, third, releaseHandover, retryPeriod)
	assert.Less(t, releaseHandover, leaseDuration, "a released lease is taken before it would have expired")
	assert.Equal(t, 1.0, masterStatus(t, mgrs[third].mgr))

	require.NoError(t, mgrs[third].stop(t))
	maxActive, iv = act.snapshot()
	assert.Equal(t, 1, maxActive, "never two active leaders")
	require.Len(t, iv, 3)
	for i := 1; i < len(iv); i++ {
		assert.False(t, iv[i].start.Before(iv[i-1].end), "%s started before %s stopped", iv[i].who, iv[i-1].who)
	}
}

func TestLostLeaseStopsManager(t *testing.T) {
	lease := unique("lost-by-manager")
	mgr := newManager(t, restConfig, electionOptions(lease, true))
	l := &log{}
	leader := newBlocking("leader", l)
	var cancelledAt time.Time
	leader.onCancel = func() { cancelledAt = time.Now() }
	other := leaderAware{newBlocking("other", l), false}
	require.NoError(t, mgr.Add(leader))
	require.NoError(t, mgr.Add(other))
	r := start(mgr)
	defer r.cancel()
	waitClosed(t, leader.started, 30*time.Second, "leader started")

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

	err := r.wait(t, 3*(renewDeadline+retryPeriod)+30*time.Second)
	t.Logf("leader-only work stopped %s after the lease was taken (RenewDeadline %s)", cancelledAt.Sub(stolen), renewDeadline)
	require.Error(t, err)
	assert.True(t, errors.Is(err, leaderelection.ErrLeaderElectionLost))
	assert.Contains(t, err.Error(), "lease default/"+lease+": leaderelection: leadership lost")
	assert.ElementsMatch(t, []string{"start leader", "start other", "stop leader", "stop other"}, l.list())

	got, err := cs.CoordinationV1().Leases("default").Get(ctx, lease, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "intruder", ptr.Deref(got.Spec.HolderIdentity, ""), "a deposed leader releases nothing")
}
