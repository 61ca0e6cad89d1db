package runnables

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Runnable is what a Group runs: Start blocks until ctx ends (or the work
// is done) and returns after its goroutines exit. It is the manager's
// Runnable (an alias there too).
type Runnable = interface {
	Start(ctx context.Context) error
}

// Group is a set of runnables started and stopped together: the
// manager's caches, the runnables that need no leadership, the leader-only
// ones. It owns its fields and its lock; the manager's run loop calls
// Start, Stop and Restart, the manager's Add calls Add from any goroutine.
//
// A Group moves Idle → Running (Start) → Stopped (Stop); Restart makes a
// stopped group idle again, every member pending, for the next leader
// term. Runnables added while it is idle wait for start, while it runs
// start at once, while it is stopped wait for restart.
type Group struct {
	name   string
	nameOf func(Runnable) string // names a runnable in errors and StillRunning
	fail   func(error)           // gets the error of a runnable that returned one

	mu      sync.Mutex
	state   State
	ctx     context.Context // the runnables' context while running
	cancel  context.CancelFunc
	pending []Runnable          // to start on start
	members []Runnable          // every runnable added, to start again each leader term
	live    map[*entry]struct{} // runnables whose Start has not returned
	drained chan struct{}       // closed when live becomes empty after stop; nil before stop
}

// State is where a Group is; see Group.
type State uint8

// The states of a Group.
const (
	Idle    State = iota // before Start, and after Restart
	Running              // between Start and Stop
	Stopped              // after Stop
)

// Name returns the name g was made with.
func (g *Group) Name() string { return g.name }

// String names s in logs and in Check's errors.
func (s State) String() string {
	return [...]string{"idle", "running", "stopped"}[s]
}

// entry is one live runnable.
type entry struct{ name string }

// New returns an idle Group called name (in its errors and Checks);
// nameOf names a runnable, fail receives the error of one that returned
// one, wrapped with its name.
func New(name string, nameOf func(Runnable) string, fail func(error)) *Group {
	return &Group{name: name, nameOf: nameOf, fail: fail, live: make(map[*entry]struct{})}
}

// Add registers r: it starts now if g is running, else with the next
// Start (after a Restart when g is stopped).
func (g *Group) Add(r Runnable) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.members = append(g.members, r)
	switch g.state {
	case Running:
		g.runLocked(r, func() {})
	case Idle:
		g.pending = append(g.pending, r)
	case Stopped: // restart makes it pending
	}
}

// Prepend puts r first among the pending runnables (the manager's cache)
// without making it a member.
func (g *Group) Prepend(r Runnable) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending = append([]Runnable{r}, g.pending...)
}

// Start runs the pending runnables under a new context derived from
// parent and returns once each one's Start has been called; runnables
// added from now on start at once. g must be idle (else Start panics: the
// run loop called it out of order).
func (g *Group) Start(parent context.Context) {
	var invoked sync.WaitGroup
	g.mu.Lock()
	g.mustBeLocked(Idle, "start")
	g.ctx, g.cancel = context.WithCancel(parent)
	g.state = Running
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
func (g *Group) runLocked(r Runnable, invoked func()) {
	e := &entry{name: g.nameOf(r)}
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

// CancelNow cancels the runnables' context without waiting: they should
// return.
func (g *Group) CancelNow() {
	g.mu.Lock()
	cancel := g.cancel
	g.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// Stop makes g stopped (runnables added from now on wait for Restart),
// cancels its runnables and waits until they returned or ctx ended. It
// returns the names of those still running, sorted; none when all
// returned. It is the one wait of every stop path: the shutdown's and the
// re-campaign's.
func (g *Group) Stop(ctx context.Context) (still []string) {
	g.mu.Lock()
	g.state = Stopped
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
	if Within(ctx, drained) {
		return nil
	}
	// The deadline may pass just as the last runnable returns: only
	// runnables still running count.
	return StillRunning(g)
}

// Within waits until done is closed or ctx ends, and reports whether done
// was closed (done wins when both are ready). Every wait bounded by the
// manager's GracefulShutdownTimeout goes through it.
func Within(ctx context.Context, done <-chan struct{}) bool {
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

// Restart makes a stopped g idle with every member pending, those added
// since the last Start included, so that the next Start runs them all (a
// new leader term), and returns how many. Every runnable of the last
// Start must have returned; g must be stopped (else Restart panics).
func (g *Group) Restart() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mustBeLocked(Stopped, "restart")
	g.state = Idle
	g.ctx, g.cancel = nil, nil
	g.pending = slices.Clone(g.members)
	return len(g.pending)
}

// mustBeLocked panics unless g is in state s: the run loop called op out
// of order, a bug in the manager. g.mu is held.
func (g *Group) mustBeLocked(s State, op string) {
	if g.state != s {
		panic(fmt.Sprintf("manager: %s of group %s, which is %s, not %s", op, g.name, g.state, s))
	}
}

// StillRunning returns the names of the runnables of groups whose Start
// has not returned, sorted. It is the one place that names them, for the
// errors and logs of every stop path.
func StillRunning(groups ...*Group) []string {
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

// Check returns g's state and an error for each broken invariant of its
// fields: a running group has a context (cancelled already if the lease
// was lost) and nothing pending; an idle one has no context and nothing
// live (a new term starts only after the last
// one's runnables returned); a stopped one's context is cancelled; only a
// stopped group waits to be drained.
func (g *Group) Check() (State, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("group %s (%s): "+format, append([]any{g.name, g.state}, args...)...))
	}
	switch g.state {
	case Running:
		if g.ctx == nil { // cancelled early when the lease was lost
			bad("no context")
		}
		if len(g.pending) > 0 {
			bad("%d runnables pending", len(g.pending))
		}
	case Idle:
		if g.ctx != nil {
			bad("has a context")
		}
		if len(g.live) > 0 {
			bad("%d runnables live", len(g.live))
		}
	case Stopped:
		if g.ctx != nil && g.ctx.Err() == nil {
			bad("context not cancelled")
		}
	}
	if g.drained != nil && (g.state != Stopped || len(g.live) == 0) {
		bad("waits to be drained with %d live", len(g.live))
	}
	return g.state, errors.Join(errs...)
}
