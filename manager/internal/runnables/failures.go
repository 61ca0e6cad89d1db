package runnables

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/go-logr/logr"
)

// Failures collects the errors of one manager's run: the first one before
// the stop is Start's cause and ends Context (the run loop then stops);
// later ones, and those returned while stopping except context
// cancellation, are joined to it. Runnables' and servers' goroutines
// report here.
type Failures struct {
	logger logr.Logger
	ctx    context.Context // ends at the first error before the stop
	end    context.CancelFunc

	mu       sync.Mutex
	stopping bool
	first    error
	later    []error
}

// NewFailures returns an empty Failures that logs each error on logger.
func NewFailures(logger logr.Logger) *Failures {
	ctx, end := context.WithCancel(context.Background())
	return &Failures{logger: logger, ctx: ctx, end: end}
}

// Add records err.
func (f *Failures) Add(err error) {
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

// Stopping marks the stop's beginning: from now on a context
// cancellation is not an error.
func (f *Failures) Stopping() {
	f.mu.Lock()
	f.stopping = true
	f.mu.Unlock()
}

// Result joins the errors recorded with extra.
func (f *Failures) Result(extra ...error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(slices.Concat([]error{f.first}, f.later, extra)...)
}

// Context ends at the first error recorded before Stopping.
func (f *Failures) Context() context.Context { return f.ctx }
