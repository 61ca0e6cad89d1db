package manager

import (
	"context"
	"fmt"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/webhook"
)

// Runnable is anything the manager runs: Start blocks until ctx ends (or
// the work is done) and returns after its goroutines exit. A non-nil error
// stops the manager. It is an alias so that controller.Manager's
// Add(interface{ Start(context.Context) error }) and Manager.Add are the
// same method.
type Runnable = interface {
	Start(ctx context.Context) error
}

// RunnableFunc adapts a function to a Runnable.
type RunnableFunc func(ctx context.Context) error

// Start calls f(ctx).
func (f RunnableFunc) Start(ctx context.Context) error { return f(ctx) }

// LeaderElectionRunnable is implemented by runnables that say whether they
// need leadership. A runnable that does not implement it is leader-only,
// as in controller-runtime.
type LeaderElectionRunnable interface {
	// NeedLeaderElection reports whether the runnable may run only on the
	// leader.
	NeedLeaderElection() bool
}

// namedController is implemented by controllers; the manager rejects two
// with the same name.
type namedController interface {
	ControllerName() string
}

// runnableName names r in logs and errors.
func runnableName(r Runnable) string {
	if c, ok := r.(namedController); ok {
		return "controller " + c.ControllerName()
	}
	return fmt.Sprintf("%T", r)
}

// needsLeadership reports whether r is leader-only.
func needsLeadership(r Runnable) bool {
	le, ok := r.(LeaderElectionRunnable)
	return !ok || le.NeedLeaderElection()
}

// groupFor picks r's group: user-added caches start with the manager's
// cache, runnables that need no leadership next, the rest on election.
func (m *Manager) groupFor(r Runnable) *group {
	if _, ok := r.(cache.Cache); ok {
		return m.caches
	}
	if _, ok := r.(*webhook.Server); ok {
		// Webhooks start with the caches and stop after everything else:
		// a cache of a kind with a conversion webhook cannot sync without
		// them, and controllers' writes may pass through them.
		return m.caches
	}
	if !needsLeadership(r) {
		return m.others
	}
	return m.leaders
}

// Add registers r. It starts with its group: at once if the group already
// runs (a leader-only runnable added to an elected manager starts now),
// else when the group starts. Add fails when the manager is stopping, and
// when r is a controller whose ControllerName is already used. Adding the
// manager's own cache does nothing.
func (m *Manager) Add(r Runnable) error {
	if r == nil {
		return fmt.Errorf("manager: cannot add a nil runnable")
	}
	if c, ok := r.(cache.Cache); ok && c == m.cache {
		return nil // the manager runs its own cache already
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.currentPhase() >= phaseStopping { // enter(phaseStopping) holds m.mu
		return fmt.Errorf("manager: cannot add %s: manager is stopping", runnableName(r))
	}
	if c, ok := r.(namedController); ok {
		name := c.ControllerName()
		if _, dup := m.controllerNames[name]; dup && !skipsNameCheck(r) { // controllerconfig.go
			return fmt.Errorf("manager: controller name %q is already used by this manager", name)
		}
		if err := m.noteControllerLocked(r); err != nil { // sources.go
			return err
		}
		m.controllerNames[name] = struct{}{}
	}
	m.useRegistry(r) // metrics.go
	g := m.groupFor(r)
	if c, ok := r.(cache.Cache); ok && g == m.caches {
		m.extraCaches = append(m.extraCaches, c)
	}
	g.add(r)
	return nil
}
