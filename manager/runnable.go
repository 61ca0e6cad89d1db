package manager

import (
	"context"
	"fmt"
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

// fail records the error of a runnable, a server or the run loop for
// Start's result; the first one stops the manager.
func (m *Manager) fail(err error) { m.failures.Add(err) }
