package manager

import (
	"context"
	"fmt"
)

// phase is where the manager's lifecycle is. Start's run loop (start.go)
// is the only writer. The phases:
//   - idle: New returned; Start was not called.
//   - syncing: the servers and the event broadcaster run; the caches start
//     and Start waits until they sync; at its end the runnables that need
//     no leadership start and the campaign begins.
//   - standby: campaigning for the lease; the leader-only runnables do not
//     run. Without leader election the loop passes through at once.
//   - leading: the leader-only runnables of the current term run.
//   - stopping: shutting down in reverse start order.
//   - stopped: Start returned.
//
// The transitions:
//
//	idle → syncing → standby → leading     (elected; at once without election)
//	leading → standby                      (lease lost, LeaderElectionRecampaign, every
//	                                        leader-only runnable returned in time)
//	syncing, standby, leading → stopping   (ctx ended, a runnable failed, the lease was
//	                                        lost, the campaign ended or failed)
//	stopping → stopped
type phase int32

const (
	phaseIdle phase = iota
	phaseSyncing
	phaseStandby
	phaseLeading
	phaseStopping
	phaseStopped
)

var phaseNames = [...]string{"idle", "syncing", "standby", "leading", "stopping", "stopped"}

// String names p in logs.
func (p phase) String() string {
	if p < 0 || int(p) >= len(phaseNames) {
		return fmt.Sprintf("phase(%d)", int32(p))
	}
	return phaseNames[p]
}

// currentPhase returns the lifecycle's phase; any goroutine may ask.
func (m *Manager) currentPhase() phase { return phase(m.phase.Load()) }

// lifecycle is the state of one Start's run loop; only Start's goroutine
// uses it. The current campaign is Manager.campaign, which other
// goroutines read (holdsLease).
type lifecycle struct {
	m    *Manager
	live context.Context // ends when Start's ctx ends or a runnable fails
	base context.Context // the parent of the groups' and the campaigns' contexts; never ends
	term int             // leader terms won so far
	lost bool            // the lease was lost: the stop cancels every context at once
}

// ended logs why the run ended and returns stopping.
func (l *lifecycle) ended() phase {
	if l.m.failures.ctx.Err() == nil {
		l.m.logger.Info("stopping: context done")
	}
	return phaseStopping
}

// enter moves the lifecycle to p and logs it. The move to stopping is made
// under m.mu, so that Add, which holds it, either sees stopping or
// finishes adding before the shutdown begins.
func (m *Manager) enter(p phase) {
	if p == phaseStopping {
		m.mu.Lock()
		defer m.mu.Unlock()
	}
	from := phase(m.phase.Swap(int32(p)))
	m.logger.V(1).Info("lifecycle", "from", from.String(), "phase", p.String())
}

// grace returns a context that ends GracefulShutdownTimeout after now or
// when parent ends (never by timeout when the timeout is negative).
func (m *Manager) grace(parent context.Context) (context.Context, context.CancelFunc) {
	if d := m.opts.GracefulShutdownTimeout; d >= 0 {
		return context.WithTimeout(parent, d)
	}
	return context.WithCancel(parent)
}
