package runnables

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blocker is a runnable that runs until its context ends (or until release
// is closed, when it ignores its context), then returns err.
type blocker struct {
	name    string
	release chan struct{} // nil: return when ctx ends
	err     error
	started chan struct{}
}

func newBlocker(name string) *blocker {
	return &blocker{name: name, started: make(chan struct{}, 8)}
}

func (b *blocker) Start(ctx context.Context) error {
	b.started <- struct{}{}
	if b.release != nil {
		<-b.release
	} else {
		<-ctx.Done()
	}
	return b.err
}

func nameOf(r Runnable) string {
	if b, ok := r.(*blocker); ok {
		return b.name
	}
	return fmt.Sprintf("%T", r)
}

// failures collects what a Group reports.
type failures struct {
	mu   sync.Mutex
	errs []error
}

func (f *failures) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, err)
}

func (f *failures) all() []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]error(nil), f.errs...)
}

func mustCheck(t *testing.T, g *Group, want State) {
	t.Helper()
	s, err := g.Check()
	require.NoError(t, err)
	require.Equal(t, want, s)
}

// TestGroupLifecycle walks a Group through two terms and checks its
// invariants after every step.
func TestGroupLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var f failures
		g := New("leaders", nameOf, f.fail)
		a, b, c := newBlocker("a"), newBlocker("b"), newBlocker("c")
		b.err = errors.New("boom")
		g.Add(a)
		mustCheck(t, g, Idle)
		select {
		case <-a.started:
			t.Fatal("a started before Start")
		default:
		}

		g.Start(context.Background())
		<-a.started // Start returned after a's Start was called
		mustCheck(t, g, Running)
		g.Add(b) // starts at once
		<-b.started

		assert.Empty(t, g.Stop(context.Background()))
		mustCheck(t, g, Stopped)
		synctest.Wait() // b's error is reported after Stop saw it return
		assert.Equal(t, []error{errors.New("manager: b: boom")}, unwrapAll(f.all()))

		g.Add(c) // waits for Restart
		assert.Equal(t, 3, g.Restart())
		mustCheck(t, g, Idle)
		g.Start(context.Background())
		for _, r := range []*blocker{a, b, c} {
			<-r.started
		}
		mustCheck(t, g, Running)
		assert.Empty(t, g.Stop(context.Background()))
		mustCheck(t, g, Stopped)
	})
}

// unwrapAll keeps the messages only, for comparing.
func unwrapAll(errs []error) []error {
	out := make([]error, 0, len(errs))
	for _, err := range errs {
		out = append(out, errors.New(err.Error()))
	}
	return out
}

// TestStopNamesWhatStillRuns: a runnable that ignores its context is
// named by Stop once the deadline passed, and by nothing once it returned.
func TestStopNamesWhatStillRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New("runnables", nameOf, func(error) {})
		stubborn, polite := newBlocker("stubborn"), newBlocker("polite")
		stubborn.release = make(chan struct{})
		g.Add(stubborn)
		g.Add(polite)
		g.Start(context.Background())
		<-stubborn.started
		<-polite.started

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // synctest's clock
		defer cancel()
		assert.Equal(t, []string{"stubborn"}, g.Stop(ctx))
		s, err := g.Check()
		assert.NoError(t, err, "a stopped group waiting to be drained is consistent")
		assert.Equal(t, Stopped, s)

		close(stubborn.release)
		synctest.Wait() // stubborn's goroutine has returned
		assert.Empty(t, StillRunning(g))
		_, err = g.Check()
		assert.NoError(t, err)
	})
}

// TestWithin: done wins when both are ready.
func TestWithin(t *testing.T) {
	done := make(chan struct{})
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, Within(ended, done))
	close(done)
	assert.True(t, Within(ended, done))
	assert.True(t, Within(context.Background(), done))
}

// TestOutOfOrderPanics: Start of a running group and Restart of one that
// was never stopped are bugs of the caller: they panic.
func TestOutOfOrderPanics(t *testing.T) {
	g := New("caches", nameOf, func(error) {})
	assert.PanicsWithValue(t, "manager: restart of group caches, which is idle, not stopped", func() { g.Restart() })
	g.Start(context.Background())
	// The panic leaves g locked: the manager is broken beyond repair.
	assert.PanicsWithValue(t, "manager: start of group caches, which is running, not idle", func() { g.Start(context.Background()) })
}

// TestCheckFindsBrokenGroups breaks a Group's fields by hand and asserts
// that Check names what is wrong.
func TestCheckFindsBrokenGroups(t *testing.T) {
	tests := []struct {
		name    string
		breakIt func(g *Group)
		want    string
	}{{
		name:    "a runnable live in an idle group",
		breakIt: func(g *Group) { g.live[&entry{name: "ghost"}] = struct{}{} },
		want:    "group runnables (idle): 1 runnables live",
	}, {
		name: "a running group with runnables pending",
		breakIt: func(g *Group) {
			g.state = Running
			g.ctx = context.Background()
			g.pending = []Runnable{newBlocker("x")}
		},
		want: "group runnables (running): 1 runnables pending",
	}, {
		name:    "a running group without a context",
		breakIt: func(g *Group) { g.state = Running },
		want:    "group runnables (running): no context",
	}, {
		name:    "an idle group with a context",
		breakIt: func(g *Group) { g.ctx = context.Background() },
		want:    "group runnables (idle): has a context",
	}, {
		name: "a stopped group whose context still runs",
		breakIt: func(g *Group) {
			g.state = Stopped
			g.ctx, g.cancel = context.WithCancel(context.Background())
		},
		want: "group runnables (stopped): context not cancelled",
	}, {
		name:    "an idle group waiting to be drained",
		breakIt: func(g *Group) { g.drained = make(chan struct{}) },
		want:    "group runnables (idle): waits to be drained with 0 live",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New("runnables", nameOf, func(error) {})
			mustCheck(t, g, Idle)
			tt.breakIt(g)
			_, err := g.Check()
			assert.EqualError(t, err, tt.want)
			if g.cancel != nil {
				g.cancel()
			}
		})
	}
}
