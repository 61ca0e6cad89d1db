package manager

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kubeloop/kubeloop/manager/internal/runnables"
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
//	standby → standby                      (won and lost before leading, LeaderElectionRecampaign)
//	syncing, standby, leading → stopping   (ctx ended, a runnable failed, the lease was
//	                                        lost, the campaign ended or failed)
//	stopping → stopped
//
// transitions holds these moves and enter refuses any other. Each phase
// also fixes the states of the three groups (groupStates) and whether a
// campaign runs and Elected is closed; check verifies that after each
// transition. The re-campaign stops the leader-only group while the phase
// still says leading, and makes it idle before the move to standby.
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
	if l.m.failures.Context().Err() == nil {
		l.m.logger.Info("stopping: context done")
	}
	return phaseStopping
}

// transitions are the moves the run loop may make (the drawing above).
var transitions = map[phase][]phase{
	phaseIdle:     {phaseSyncing},
	phaseSyncing:  {phaseStandby, phaseStopping},
	phaseStandby:  {phaseLeading, phaseStandby, phaseStopping},
	phaseLeading:  {phaseStandby, phaseStopping},
	phaseStopping: {phaseStopped},
}

// enter moves the lifecycle to p and logs the move at V(1). A move not in
// transitions is a bug in this package and panics. The move to stopping is
// made under m.mu, so that Add, which holds it, either sees stopping or
// finishes adding before the shutdown begins.
func (m *Manager) enter(p phase) {
	if p == phaseStopping {
		m.mu.Lock()
		defer m.mu.Unlock()
	}
	from := m.currentPhase()
	if !slices.Contains(transitions[from], p) {
		panic(fmt.Sprintf("manager: lifecycle cannot move from %s to %s", from, p))
	}
	m.phase.Store(int32(p))
	m.logger.V(1).Info("lifecycle", "from", from.String(), "phase", p.String())
}

// groupStates are, for each phase, the states each group may be in while
// the run loop waits in that phase: caches, others, leaders. In leading,
// the leader-only group is stopped while a re-campaign waits for it.
var groupStates = func() map[phase][3][]runnables.State {
	idle, running, stopped := runnables.Idle, runnables.Running, runnables.Stopped
	anyState := []runnables.State{idle, running, stopped}
	return map[phase][3][]runnables.State{
		phaseIdle:     {{idle}, {idle}, {idle}},
		phaseSyncing:  {{idle, running}, {idle}, {idle}},
		phaseStandby:  {{running}, {running}, {idle}},
		phaseLeading:  {{running}, {running}, {running, stopped}},
		phaseStopping: {anyState, anyState, anyState},
		phaseStopped:  {{stopped}, {stopped}, {stopped}},
	}
}()

// check returns an error for each way the groups, the campaign and
// Elected disagree with the phase, or break their own invariants
// (runnables.Group.Check). The tests call it after each transition, once the run
// loop waits; while the loop moves, a group may be a step ahead.
func (m *Manager) check() error {
	p := m.currentPhase()
	var errs []error
	var states [3]runnables.State
	for i, g := range []*runnables.Group{m.caches, m.others, m.leaders} {
		s, err := g.Check()
		errs = append(errs, err)
		if !slices.Contains(groupStates[p][i], s) {
			errs = append(errs, fmt.Errorf("phase %s: group %s is %s, want one of %v", p, g.Name(), s, groupStates[p][i]))
		}
		states[i] = s
	}
	c, leaders := m.campaign.Load(), states[2]
	switch {
	case p <= phaseSyncing && c != nil:
		errs = append(errs, fmt.Errorf("phase %s: a campaign has begun", p))
	case p == phaseStandby && (c != nil) != (m.electors != nil):
		errs = append(errs, fmt.Errorf("phase standby: campaigning is %t, leader election is %t", c != nil, m.electors != nil))
	case p == phaseLeading && leaders == runnables.Running && m.electors != nil && c == nil:
		errs = append(errs, errors.New("phase leading: leader-only runnables run without a campaign"))
	}
	if elected := isClosed(m.elected); p <= phaseSyncing && elected || p == phaseLeading && !elected {
		errs = append(errs, fmt.Errorf("phase %s: Elected closed is %t", p, elected))
	}
	return errors.Join(errs...)
}

// grace returns a context that ends GracefulShutdownTimeout after now or
// when parent ends (never by timeout when the timeout is negative).
func (m *Manager) grace(parent context.Context) (context.Context, context.CancelFunc) {
	if d := m.opts.GracefulShutdownTimeout; d >= 0 {
		return context.WithTimeout(parent, d)
	}
	return context.WithCancel(parent)
}

// isClosed reports whether c is closed.
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
