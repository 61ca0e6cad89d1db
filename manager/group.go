package manager

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/webhook"
)

// group is a set of runnables started and stopped together: the caches,
// the runnables that need no leadership, the leader-only ones. It owns its
// fields and its lock; the run loop calls start, stop, cancelNow and
// restart, Add calls add from any goroutine.
//
// A group is idle (added runnables wait in pending) until start, then
// running (added runnables start at once) until stop, then idle again;
// restart makes every member pending again, for the next leader term.
type group struct {
	name string
	fail func(error) // gets the error of a runnable that returned one

	mu      sync.Mutex
	ctx     context.Context // the runnables' context while running
	cancel  context.CancelFunc
	running bool                // added runnables start at once
	pending []Runnable          // to start on start
	members []Runnable          // every runnable added, to start again each leader term
	live    map[*entry]struct{} // runnables whose Start has not returned
	wg      sync.WaitGroup      // counts live; Add is only called while running
}

// entry is one live runnable.
type entry struct{ name string }

func newGroup(name string, fail func(error)) *group {
	return &group{name: name, fail: fail, live: make(map[*entry]struct{})}
}

// add registers r: it starts now if g is running, else on the next start.
func (g *group) add(r Runnable) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.members = append(g.members, r)
	if g.running {
		g.runLocked(r, func() {})
		return
	}
	g.pending = append(g.pending, r)
}

// prepend puts r first among the pending runnables (the manager's cache)
// without making it a member.
func (g *group) prepend(r Runnable) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending = append([]Runnable{r}, g.pending...)
}

// start runs the pending runnables under a new context derived from
// parent and returns once each one's Start has been called; runnables
// added from now on start at once.
func (g *group) start(parent context.Context) {
	var invoked sync.WaitGroup
	g.mu.Lock()
	g.ctx, g.cancel = context.WithCancel(parent)
	g.running = true
	for _, r := range g.pending {
		invoked.Add(1)
		g.runLocked(r, invoked.Done)
	}
	g.pending = nil
	g.mu.Unlock()
	invoked.Wait()
}

// runLocked runs r in a goroutine under g's context; invoked is called
// just before r.Start. g.mu is held.
func (g *group) runLocked(r Runnable, invoked func()) {
	e := &entry{name: runnableName(r)}
	ctx := g.ctx
	g.live[e] = struct{}{}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		invoked()
		err := r.Start(ctx)
		g.mu.Lock()
		delete(g.live, e)
		g.mu.Unlock()
		if err != nil {
			g.fail(fmt.Errorf("manager: %s: %w", e.name, err))
		}
	}()
}

// cancelNow cancels the runnables' context without waiting: they should
// return.
func (g *group) cancelNow() {
	g.mu.Lock()
	cancel := g.cancel
	g.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// stop makes g idle (runnables added from now on wait for the next
// start), cancels its runnables and waits until they returned or ctx
// ended. It returns the names of those still running, sorted; none when
// all returned.
func (g *group) stop(ctx context.Context) (still []string) {
	g.mu.Lock()
	g.running = false
	g.mu.Unlock()
	g.cancelNow()
	returned := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(returned)
	}()
	select {
	case <-returned:
		return nil
	case <-ctx.Done():
		// The deadline may pass just as the last runnable returns: only
		// runnables still running count.
		return stillRunning(g)
	}
}

// restart makes every member pending again, those added since the last
// start included, so that the next start runs them all (a new leader
// term), and returns how many. g must be idle.
func (g *group) restart() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending = slices.Clone(g.members)
	return len(g.pending)
}

// stillRunning returns the names of the runnables of groups whose Start
// has not returned, sorted.
func stillRunning(groups ...*group) []string {
	var still []string
	for _, g := range groups {
		g.mu.Lock()
		for e := range g.live {
			still = append(still, e.name)
		}
		g.mu.Unlock()
	}
	slices.Sort(still)
	return still
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
