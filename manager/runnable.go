package manager

import (
	"context"
	"fmt"
	"sync"

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

// group is a set of runnables started and stopped together. Its fields
// are guarded by the manager's mutex, except wg.
type group struct {
	name    string
	ctx     context.Context
	cancel  context.CancelFunc
	started bool       // added runnables start at once
	pending []Runnable // added before the group started
	members []Runnable // every runnable added, to start again each leader term (recampaign.go)
	running map[*entry]struct{}
	wg      sync.WaitGroup
}

// entry is one running runnable.
type entry struct{ name string }

func newGroup(name string) *group {
	return &group{name: name, running: make(map[*entry]struct{})}
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
	if m.stopping {
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
	g := m.groupFor(r)
	if c, ok := r.(cache.Cache); ok && g == m.caches {
		m.extraCaches = append(m.extraCaches, c)
	}
	g.members = append(g.members, r)
	if g.started {
		m.runLocked(g, r, func() {})
	} else {
		g.pending = append(g.pending, r)
	}
	return nil
}

// startGroupLocked starts g's pending runnables and returns once each
// one's Start has been called; later ones start on Add. It must be called
// with m.mu held and not after the stop began.
func (m *Manager) startGroupLocked(g *group) {
	g.started = true
	var invoked sync.WaitGroup
	for _, r := range g.pending {
		invoked.Add(1)
		m.runLocked(g, r, invoked.Done)
	}
	g.pending = nil
	invoked.Wait()
}

// runLocked runs r in a goroutine under g's context. An error before the
// manager stops becomes Start's error; one during the stop is collected.
// invoked is called just before r.Start.
func (m *Manager) runLocked(g *group, r Runnable, invoked func()) {
	e := &entry{name: runnableName(r)}
	g.running[e] = struct{}{}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		invoked()
		err := r.Start(g.ctx)
		m.mu.Lock()
		delete(g.running, e)
		m.mu.Unlock()
		if err != nil {
			m.fail(fmt.Errorf("manager: %s: %w", e.name, err))
		}
	}()
}
