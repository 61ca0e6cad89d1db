package providertest

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// Logs collects log lines, safe for concurrent use. The zero value is
// ready.
type Logs struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed and replaced on every line
}

// Logger returns a logger that appends each line to l.
func (l *Logs) Logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, args)
		if l.changed != nil {
			close(l.changed)
			l.changed = nil
		}
	}, funcr.Options{})
}

// String returns the lines so far, one a line.
func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// Count returns how many lines hold every one of parts.
func (l *Logs) Count(parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.countLocked(parts)
}

func (l *Logs) countLocked(parts []string) int {
	n := 0
	for _, line := range l.lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// Wait blocks until some line holds every one of parts, or ctx ends; it
// then returns an error with the lines so far.
func (l *Logs) Wait(ctx context.Context, parts ...string) error {
	for {
		l.mu.Lock()
		if l.countLocked(parts) > 0 {
			l.mu.Unlock()
			return nil
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%w: no line with %q in:\n%s", ctx.Err(), parts, l.String())
		}
	}
}
