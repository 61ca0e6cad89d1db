package real_bench

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/kubeloop/kubeloop/manager"
)

var failovers int

// BenchmarkRealFailover measures kubeloop's leader failover: a leader and a
// standby manager (in this process) share a Lease; the leader's context is
// cancelled and the time until the standby's Elected() closes is reported
// as s/failover. case=release sets LeaderElectionReleaseOnCancel; case=crash
// does not, so the standby waits for the lease to expire. Run it with
// -benchtime 1x.
func BenchmarkRealFailover(b *testing.B) {
	for _, release := range []bool{true, false} {
		name := "case=crash"
		if release {
			name = "case=release"
		}
		b.Run(name+"/impl=kubeloop", func(b *testing.B) {
			var total time.Duration
			var n int
			for b.Loop() {
				d, err := failover(release)
				if err != nil {
					b.Fatal(err)
				}
				total += d
				n++
			}
			b.ReportMetric(total.Seconds()/float64(n), "s/failover")
		})
	}
}

func failover(release bool) (time.Duration, error) {
	failovers++
	id := fmt.Sprintf("bench-failover-%d", failovers)
	newMgr := func(identity string) (*manager.Manager, error) {
		return manager.New(cfg, manager.Options{
			Logger:                        logr.FromSlogHandler(slog.DiscardHandler),
			LeaderElection:                true,
			LeaderElectionID:              id,
			LeaderElectionNamespace:       namespace,
			LeaderElectionIdentity:        identity,
			LeaderElectionReleaseOnCancel: release,
			LeaseDuration:                 4 * time.Second,
			RenewDeadline:                 3 * time.Second,
			RetryPeriod:                   500 * time.Millisecond,
		})
	}
	start := func(m *manager.Manager) (context.CancelFunc, <-chan error) {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- m.Start(ctx) }()
		return cancel, errc
	}
	wait := func(ch <-chan struct{}, what string) error {
		select {
		case <-ch:
			return nil
		case <-time.After(30 * time.Second):
			return fmt.Errorf("%s not elected after 30 s", what)
		}
	}
	a, err := newMgr("a")
	if err != nil {
		return 0, err
	}
	cancelA, errA := start(a)
	defer cancelA()
	if err := wait(a.Elected(), "leader"); err != nil {
		return 0, err
	}
	sb, err := newMgr("b")
	if err != nil {
		return 0, err
	}
	cancelB, errB := start(sb)
	defer func() { cancelB(); <-errB }()
	time.Sleep(time.Second) // the standby has seen the held lease
	t0 := time.Now()
	cancelA()
	if err := wait(sb.Elected(), "standby"); err != nil {
		return 0, err
	}
	d := time.Since(t0)
	<-errA
	return d, nil
}
