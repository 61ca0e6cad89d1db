package manager

import (
	"fmt"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/manager/internal/runnables"
	"github.com/kubeloop/kubeloop/webhook"
)

// groupFor picks r's group: user-added caches start with the manager's
// cache, runnables that need no leadership next, the rest on election.
func (m *Manager) groupFor(r Runnable) *runnables.Group {
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
	g.Add(r)
	return nil
}
