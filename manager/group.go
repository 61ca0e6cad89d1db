package manager

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// group is a set of runnables started and stopped together: the caches,
// the runnables that need no leadership, the leader-only ones. It owns its
// fields and its lock; the run loop calls start, stop and restart, Add
// calls add from any goroutine.
//
// A group moves idle → running (start) → stopped (stop); restart makes a
// stopped group idle again, every member pending, for the next leader
// term. Runnables added while it is idle wait for start, while it runs
// start at once, while it is stopped wait for restart.
type group struct {
	name string
	fail func(error) // gets the error of a runnable that returned one

	mu      sync.Mutex
	state   groupState
	ctx     context.Context // the runnables' context while running
	cancel  context.CancelFunc
	pending []Runnable          // to start on start
	members []Runnable          // every runnable added, to start again each leader term
	live    map[*entry]struct{} // runnables whose Start has not returned
	drained chan struct{}       // closed when live becomes empty after stop; nil before stop
}

// groupState is where a group is; see group.
type groupState uint8

const (
	groupIdle groupState = iota
	groupRunning
	groupStopped
)

// String names s in logs and in check's errors.
func (s groupState) String() string {
	return [...]string{"idle", "running", "stopped"}[s]
}

// entry is one live runnable.
type entry struct{ name string }

func newGroup(name string, fail func(error)) *group {
	return &group{name: name, fail: fail, live: make(map[*entry]struct{})}
}

// add registers r: it starts now if g is running, else with the next
// start.
func (g *group) add(r Runnable) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.members = append(g.members, r)
	switch g.state {
	case groupRunning:
		g.runLocked(r, func() {})
	case groupIdle:
		g.pending = append(g.pending, r)
	case groupStopped: // restart makes it pending
	}
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
// added from now on start at once. g must be idle.
func (g *group) start(parent context.Context) {
	var invoked sync.WaitGroup
	g.mu.Lock()
	g.mustBeLocked(groupIdle, "start")
	g.ctx, g.cancel = context.WithCancel(parent)
	g.state = groupRunning
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
	go func() {
		invoked()
		err := r.Start(ctx)
		g.mu.Lock()
		delete(g.live, e)
		if len(g.live) == 0 && g.drained != nil {
			close(g.drained)
			g.drained = nil
		}
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

// stop makes g stopped (runnables added from now on wait for restart),
// cancels its runnables and waits until they returned or ctx ended. It
// returns the names of those still running, sorted; none when all
// returned. It is the one wait of every stop path: the shutdown's and the
// re-campaign's.
func (g *group) stop(ctx context.Context) (still []string) {
	g.mu.Lock()
	g.state = groupStopped
	cancel := g.cancel
	drained := make(chan struct{})
	if len(g.live) == 0 {
		close(drained)
	} else {
		g.drained = drained
	}
	g.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if within(ctx, drained) {
		return nil
	}
	// The deadline may pass just as the last runnable returns: only
	// runnables still running count.
	return stillRunning(g)
}

// within waits until done is closed or ctx ends, and reports whether done
// was closed. Every wait bounded by GracefulShutdownTimeout goes through
// it.
func within(ctx context.Context, done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	case <-ctx.Done():
		select { // both ready: done wins
		case <-done:
			return true
		default:
			return false
		}
	}
}

// restart makes a stopped g idle with every member pending, those added
// since the last start included, so that the next start runs them all (a
// new leader term), and returns how many. Every runnable of the last
// start must have returned.
func (g *group) restart() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mustBeLocked(groupStopped, "restart")
	g.state = groupIdle
	g.ctx, g.cancel = nil, nil
	g.pending = slices.Clone(g.members)
	return len(g.pending)
}

// mustBeLocked panics unless g is in state s: the run loop called op out
// of order, a bug in this package. g.mu is held.
func (g *group) mustBeLocked(s groupState, op string) {
	if g.state != s {
		panic(fmt.Sprintf("manager: %s of group %s, which is %s, not %s", op, g.name, g.state, s))
	}
}

// stillRunning returns the names of the runnables of groups whose Start
// has not returned, sorted. It is the one place that names them, for the
// errors and logs of every stop path.
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

// check returns g's state and an error for each broken invariant of its
// fields: a running group has a context (cancelled already if the lease
// was lost) and nothing pending; an idle one
// has no context and nothing live (a new term starts only after the last
// one's runnables returned); a stopped one's context is cancelled; only a
// stopped group waits to be drained.
func (g *group) check() (groupState, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("group %s (%s): "+format, append([]any{g.name, g.state}, args...)...))
	}
	switch g.state {
	case groupRunning:
		if g.ctx == nil { // cancelled early when the lease was lost
			bad("no context")
		}
		if len(g.pending) > 0 {
			bad("%d runnables pending", len(g.pending))
		}
	case groupIdle:
		if g.ctx != nil {
			bad("has a context")
		}
		if len(g.live) > 0 {
			bad("%d runnables live", len(g.live))
		}
	case groupStopped:
		if g.ctx != nil && g.ctx.Err() == nil {
			bad("context not cancelled")
		}
	}
	if g.drained != nil && (g.state != groupStopped || len(g.live) == 0) {
		bad("waits to be drained with %d live", len(g.live))
	}
	return g.state, errors.Join(errs...)
}
