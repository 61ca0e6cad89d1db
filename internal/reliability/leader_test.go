package reliability_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/leaderelection"
	"github.com/kubeloop/kubeloop/manager"
)

// Fast election timings. The elector acts on its own clock only: a
// leader stops acting RenewDeadline after its last renewal, a standby
// takes over LeaseDuration after it last saw the lease change, so
// LeaseDuration - RenewDeadline (1 s) is the margin for clock-rate skew.
// All managers share one clock here, so the oracle allows no overlap.
const (
	leaseDuration = 4 * time.Second
	renewDeadline = 3 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

// leaderOracle records when each manager's leader-only runnable acts.
type leaderOracle struct {
	mu        sync.Mutex
	intervals []leaderInterval
	started   chan string
}

type leaderInterval struct {
	who        string
	start, end time.Time
}

func (o *leaderOracle) runnable(who string) manager.Runnable {
	return manager.RunnableFunc(func(ctx context.Context) error {
		o.mu.Lock()
		i := len(o.intervals)
		o.intervals = append(o.intervals, leaderInterval{who: who, start: time.Now()})
		o.mu.Unlock()
		o.started <- who
		<-ctx.Done()
		o.mu.Lock()
		o.intervals[i].end = time.Now()
		o.mu.Unlock()
		return nil
	})
}

func (o *leaderOracle) next(t *testing.T) string {
	t.Helper()
	select {
	case who := <-o.started:
		return who
	case <-time.After(3 * (leaseDuration + renewDeadline)): // hang bound
		t.Fatal("no new leader")
		return ""
	}
}

func TestLeaderElectionKillAndPause(t *testing.T) {
	lease := unique("reliability")
	o := &leaderOracle{started: make(chan string, 8)}
	type member struct {
		proxy *faultproxy.Proxy
		run   *running
	}
	members := map[string]*member{}
	add := func(who string) {
		p, err := faultproxy.New(restConfig)
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Close() })
		mgr := newManager(t, p.Config(), "default", manager.Options{
			LeaderElection: true, LeaderElectionID: lease, LeaderElectionNamespace: "default",
			LeaderElectionIdentity: who,
			LeaseDuration:          leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
			GracefulShutdownTimeout: time.Second,
		})
		require.NoError(t, mgr.Add(o.runnable(who)))
		members[who] = &member{proxy: p, run: start(mgr)}
	}

	add("a")
	require.Equal(t, "a", o.next(t))
	add("b")

	// Pause the leader: its connection stalls, it cannot renew.
	members["a"].proxy.Blackhole(true)
	require.Equal(t, "b", o.next(t), "the standby takes over from the paused leader")
	var aErr error
	select {
	case aErr = <-members["a"].run.done:
	case <-time.After(3 * (leaseDuration + renewDeadline)): // hang bound
		t.Fatal("the paused leader's manager did not stop")
	}
	members["a"].proxy.Blackhole(false)
	assert.True(t, errors.Is(aErr, leaderelection.ErrLeaderElectionLost), "the paused leader reports the lost lease: %v", aErr)

	// Kill the new leader: it stops at once and does not release the lease.
	add("c")
	time.Sleep(2 * retryPeriod) // c campaigns as a standby
	members["b"].run.cancel()
	require.Equal(t, "c", o.next(t), "the standby takes over from the killed leader")
	<-members["b"].run.done
	assert.NoError(t, members["c"].run.stop(t))

	o.mu.Lock()
	defer o.mu.Unlock()
	iv := append([]leaderInterval(nil), o.intervals...)
	sort.Slice(iv, func(i, j int) bool { return iv[i].start.Before(iv[j].start) })
	require.Len(t, iv, 3)
	for i := 1; i < len(iv); i++ {
		gap := iv[i].start.Sub(iv[i-1].end)
		t.Logf("%s acted %s..%s; %s took over %s later", iv[i-1].who, iv[i-1].start.Format("05.000"), iv[i-1].end.Format("05.000"), iv[i].who, gap)
		assert.False(t, iv[i].start.Before(iv[i-1].end), "%s started acting while %s still acted (overlap %s)", iv[i].who, iv[i-1].who, -gap)
	}
	assert.Equal(t, []string{"a", "b", "c"}, []string{iv[0].who, iv[1].who, iv[2].who})
}
