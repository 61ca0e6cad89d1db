package manager

import (
	"context"
	"fmt"

	"github.com/kubeloop/kubeloop/manager/internal/runnables"
)

// shutdown is the stopping phase: it stops everything in reverse start
// order within GracefulShutdownTimeout, then returns Start's result.
func (l *lifecycle) shutdown() error {
	m := l.m
	m.failures.Stopping()
	ctx, cancel := m.grace(context.Background())
	defer cancel()
	groups := []*runnables.Group{m.leaders, m.others, m.caches}
	if l.lost {
		// Leadership is gone: stop acting at once, everywhere.
		for _, g := range groups {
			g.CancelNow()
		}
	}

	stop := func(g *runnables.Group) []string {
		still := g.Stop(ctx)
		if len(still) > 0 {
			m.logger.Error(ctx.Err(), "graceful shutdown timed out", "group", g.Name(), "running", still)
		}
		return still
	}
	leadersStill := stop(m.leaders)
	if c := m.campaign.Load(); c != nil {
		if err := c.stop(ctx); err != nil { // lost while stopping
			m.fail(fmt.Errorf("manager: %w", err))
		}
		if m.opts.LeaderElectionReleaseOnCancel && len(leadersStill) == 0 && !l.lost && ctx.Err() == nil {
			c.e.Release(ctx)
		}
	}
	stop(m.others)
	stop(m.caches)

	m.mu.Lock()
	servers := m.servers
	m.mu.Unlock()
	for _, s := range servers {
		s.Shutdown(ctx)
	}
	m.events.Stop()

	var timedOut error
	if ctx.Err() != nil {
		// Those that returned after their group's stop gave up do not
		// count.
		if still := runnables.StillRunning(groups...); len(still) > 0 {
			timedOut = fmt.Errorf("manager: graceful shutdown timed out after %s; still running: %v", m.opts.GracefulShutdownTimeout, still)
		}
	}
	return m.failures.Result(timedOut)
}
