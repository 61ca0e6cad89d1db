package manager

import (
	"context"
	"fmt"
)

// shutdown is the stopping phase: it stops everything in reverse start
// order within GracefulShutdownTimeout, then returns Start's result.
func (l *lifecycle) shutdown() error {
	m := l.m
	m.failures.stop()
	ctx, cancel := m.grace(context.Background())
	defer cancel()
	groups := []*group{m.leaders, m.others, m.caches}
	if l.lost {
		// Leadership is gone: stop acting at once, everywhere.
		for _, g := range groups {
			g.cancelNow()
		}
	}

	stop := func(g *group) []string {
		still := g.stop(ctx)
		if len(still) > 0 {
			m.logger.Error(ctx.Err(), "graceful shutdown timed out", "group", g.name, "running", still)
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
		if still := stillRunning(groups...); len(still) > 0 {
			timedOut = fmt.Errorf("manager: graceful shutdown timed out after %s; still running: %v", m.opts.GracefulShutdownTimeout, still)
		}
	}
	return m.failures.result(timedOut)
}
