package manager

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/go-logr/logr"
)

// failures collects the errors of one manager's run: the first one before
// the stop is Start's cause and ends ctx (the run loop then stops); later
// ones, and those returned while stopping except context cancellation,
// are joined to it. Runnables' and servers' goroutines report here.
type failures struct {
	logger logr.Logger
	ctx    context.Context // ends at the first error before the stop
	end    context.CancelFunc

	mu       sync.Mutex
	stopping bool
	first    error
	later    []error
}

func newFailures(logger logr.Logger) *failures {
	ctx, end := context.WithCancel(context.Background())
	return &failures{logger: logger, ctx: ctx, end: end}
}

// add records err.
func (f *failures) add(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.stopping:
		if !errors.Is(err, context.Canceled) {
			f.logger.Error(err, "error while stopping")
			f.later = append(f.later, err)
		}
	case f.first == nil:
		f.logger.Error(err, "stopping: runnable failed")
		f.first = err
		f.end()
	default:
		f.later = append(f.later, err)
	}
}

// stop marks the stop's beginning: from now on a context cancellation
// is not an error.
func (f *failures) stop() {
	f.mu.Lock()
	f.stopping = true
	f.mu.Unlock()
}

// result joins the errors recorded with extra.
func (f *failures) result(extra ...error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(slices.Concat([]error{f.first}, f.later, extra)...)
}

// fail records err for the manager (servers.go reports through it).
func (m *Manager) fail(err error) { m.failures.add(err) }
