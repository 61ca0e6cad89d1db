package manager

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/leaderelection"
)

// fakeElector is an elector the test drives: it leads after win is
// closed and loses the lease after lose is closed; quit ends its Run
// before it leads.
type fakeElector struct {
	win, lose, quit chan struct{}
	elected         chan struct{}
	leading         atomic.Bool
	released        atomic.Bool
}

var _ elector = (*fakeElector)(nil)

func newFakeElector() *fakeElector {
	return &fakeElector{win: make(chan struct{}), lose: make(chan struct{}), quit: make(chan struct{}), elected: make(chan struct{})}
}

func (f *fakeElector) Run(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-f.quit:
		return errors.New("leaderelection: lease test/lease: elector stopped before leading")
	case <-f.win:
	}
	f.leading.Store(true)
	close(f.elected)
	select {
	case <-ctx.Done():
		f.leading.Store(false)
		return nil
	case <-f.lose:
		f.leading.Store(false)
		return fmt.Errorf("lease test/lease: %w", leaderelection.ErrLeaderElectionLost)
	}
}

func (f *fakeElector) Elected() <-chan struct{} { return f.elected }
func (f *fakeElector) IsLeader() bool           { return f.leading.Load() }
func (f *fakeElector) Release(context.Context)  { f.released.Store(true) }

func (f *fakeElector) Remaining() (time.Duration, error) {
	if !f.leading.Load() {
		return 0, fmt.Errorf("lease test/lease: %w", client.ErrLeaseLost)
	}
	return time.Hour, nil
}

// recorder is a runnable that counts its starts and, when stuck is set,
// ignores its context until unstick.
type recorder struct {
	name        string
	leaderOnly  bool
	m           *Manager
	stuck       chan struct{}
	fail        chan error
	starts      atomic.Int32
	live        atomic.Int32
	leaseAtStop atomic.Bool
}

func (r *recorder) Start(ctx context.Context) error {
	r.starts.Add(1)
	r.live.Add(1)
	defer r.live.Add(-1)
	select {
	case <-ctx.Done():
	case err := <-r.fail:
		return err
	}
	r.leaseAtStop.Store(r.m.holdsLease())
	if r.stuck != nil {
		<-r.stuck
	}
	return nil
}

func newRecorder(name string, leaderOnly bool) *recorder {
	return &recorder{name: name, leaderOnly: leaderOnly, fail: make(chan error, 1)}
}

func (r *recorder) NeedLeaderElection() bool   { return r.leaderOnly }
func (r *recorder) ControllerName() string     { return r.name }
func (r *recorder) running() bool              { return r.live.Load() > 0 }
func (r *recorder) startCount() int            { return int(r.starts.Load()) }
func (r *recorder) heldLeaseWhenStopped() bool { return r.leaseAtStop.Load() }
func (r *recorder) failWith(err error)         { r.fail <- err }
func (r *recorder) unstick()                   { close(r.stuck) }

// harness runs one manager with fake electors inside a synctest bubble.
type harness struct {
	t      *testing.T
	m      *Manager
	cancel context.CancelFunc
	done   chan error

	mu       sync.Mutex
	electors []*fakeElector
	trace    []string // the phases entered, from the lifecycle log
}

var phaseLog = regexp.MustCompile(`"msg"="lifecycle".*"phase"="(\w+)"`)

// newHarness builds a manager that reaches no server (its cache has no
// informer, its servers are off); election says whether it campaigns,
// with fake electors.
func newHarness(t *testing.T, election bool, opts Options) *harness {
	h := &harness{t: t}
	opts.Logger = funcr.New(func(prefix, args string) {
		if m := phaseLog.FindStringSubmatch(args); m != nil {
			h.mu.Lock()
			h.trace = append(h.trace, m[1])
			h.mu.Unlock()
		}
	}, funcr.Options{Verbosity: 1})
	opts.Metrics.BindAddress = "0"
	m, err := New(&rest.Config{Host: "http://127.0.0.1:1"}, opts)
	require.NoError(t, err)
	if election {
		m.electors = func() (elector, error) {
			e := newFakeElector()
			h.mu.Lock()
			h.electors = append(h.electors, e)
			h.mu.Unlock()
			return e, nil
		}
	}
	h.m = m
	return h
}

func (h *harness) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.m.Start(ctx) }()
}

func (h *harness) add(r *recorder) error { r.m = h.m; return h.m.Add(r) }
func (h *harness) win()                  { close(h.current().win) }
func (h *harness) lose()                 { close(h.current().lose) }
func (h *harness) quit()                 { close(h.current().quit) }

// current returns the elector of the current term.
func (h *harness) current() *fakeElector {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.electors[len(h.electors)-1]
}

func (h *harness) electorCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.electors)
}

// phases returns the phases entered so far.
func (h *harness) phases() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.trace...)
}

// result returns Start's error; Start must have returned.
func (h *harness) result() error {
	select {
	case err := <-h.done:
		return err
	default:
		h.t.Fatalf("Start has not returned; phase %s", h.m.currentPhase())
		return nil
	}
}

// TestLifecycleTransitions drives the run loop through its phases with a
// fake elector: after each step, once every goroutine is blocked
// (synctest.Wait), the phase and the runnables are as the step says.
func TestLifecycleTransitions(t *testing.T) {
	type env struct {
		h             *harness
		leader, other *recorder
	}
	type step struct {
		name    string
		do      func(e env)
		phase   phase
		leading bool // holdsLease
		check   func(t *testing.T, e env)
	}
	cancel := func(e env) { e.h.cancel() }
	none := func(env) {}
	tests := []struct {
		name     string
		election bool
		opts     Options
		stuck    bool // the leader-only runnable ignores its context until unstuck
		steps    []step
		trace    []string
		wantErr  func(t *testing.T, err error)
	}{{
		name: "without election the loop passes standby and leads",
		steps: []step{
			{name: "started", do: none, phase: phaseLeading, leading: true, check: func(t *testing.T, e env) {
				assert.True(t, e.leader.running())
				assert.True(t, e.other.running())
			}},
			{name: "added while leading", do: func(e env) {
				late := newRecorder("late", true)
				require.NoError(t, e.h.add(late))
				synctest.Wait()
				assert.Equal(t, 1, late.startCount(), "starts at once")
			}, phase: phaseLeading, leading: true},
			{name: "ctx ended", do: cancel, phase: phaseStopped, leading: true, check: func(t *testing.T, e env) {
				assert.False(t, e.leader.running())
				assert.True(t, e.leader.heldLeaseWhenStopped(), "no lease to lose")
			}},
		},
		trace: []string{"syncing", "standby", "leading", "stopping", "stopped"},
	}, {
		name:     "elected, then ctx ended: the lease is released after the leaders returned",
		election: true,
		opts:     Options{LeaderElectionReleaseOnCancel: true},
		steps: []step{
			{name: "campaigning", do: none, phase: phaseStandby, check: func(t *testing.T, e env) {
				assert.False(t, e.leader.running(), "a standby runs no leader-only runnable")
				assert.True(t, e.other.running())
				assert.False(t, isClosed(e.h.m.Elected()))
			}},
			{name: "won", do: func(e env) { e.h.win() }, phase: phaseLeading, leading: true, check: func(t *testing.T, e env) {
				assert.True(t, e.leader.running())
				assert.True(t, isClosed(e.h.m.Elected()))
			}},
			{name: "ctx ended", do: cancel, phase: phaseStopped, check: func(t *testing.T, e env) {
				assert.True(t, e.leader.heldLeaseWhenStopped(), "the leaders finish while the lease is held")
				assert.True(t, e.h.current().released.Load())
				assert.Equal(t, 1, e.h.electorCount())
			}},
		},
		trace: []string{"syncing", "standby", "leading", "stopping", "stopped"},
	}, {
		name:     "lost without re-campaign: everything stops, Start returns the loss",
		election: true,
		opts:     Options{LeaderElectionReleaseOnCancel: true},
		steps: []step{
			{name: "won", do: func(e env) { e.h.win() }, phase: phaseLeading, leading: true},
			{name: "lost", do: func(e env) { e.h.lose() }, phase: phaseStopped, check: func(t *testing.T, e env) {
				assert.False(t, e.leader.heldLeaseWhenStopped())
				assert.False(t, e.other.running())
				assert.False(t, e.h.current().released.Load(), "a lost lease is not released")
			}},
		},
		trace:   []string{"syncing", "standby", "leading", "stopping", "stopped"},
		wantErr: func(t *testing.T, err error) { assert.ErrorIs(t, err, leaderelection.ErrLeaderElectionLost) },
	}, {
		name:     "lost with re-campaign: leading → standby, a new elector, the leaders start again",
		election: true,
		opts:     Options{LeaderElectionRecampaign: true},
		steps: []step{
			{name: "won", do: func(e env) { e.h.win() }, phase: phaseLeading, leading: true},
			{name: "lost", do: func(e env) { e.h.lose() }, phase: phaseStandby, check: func(t *testing.T, e env) {
				assert.False(t, e.leader.running())
				assert.True(t, e.other.running(), "the other runnables keep running")
				assert.Equal(t, 2, e.h.electorCount(), "a new elector for the next term")
			}},
			{name: "added between terms", do: func(e env) {
				late := newRecorder("late", true)
				require.NoError(t, e.h.add(late))
				synctest.Wait()
				assert.Zero(t, late.startCount(), "waits for the next term")
			}, phase: phaseStandby},
			{name: "won again", do: func(e env) { e.h.win() }, phase: phaseLeading, leading: true, check: func(t *testing.T, e env) {
				assert.Equal(t, 2, e.leader.startCount())
				assert.Equal(t, 1, e.other.startCount())
			}},
			{name: "ctx ended", do: cancel, phase: phaseStopped},
		},
		trace: []string{"syncing", "standby", "leading", "standby", "leading", "stopping", "stopped"},
	}, {
		name:     "lost with re-campaign, a leader-only runnable stuck: no second campaign",
		election: true,
		opts:     Options{LeaderElectionRecampaign: true, GracefulShutdownTimeout: time.Second},
		stuck:    true,
		steps: []step{
			{name: "won", do: func(e env) { e.h.win() }, phase: phaseLeading, leading: true},
			{name: "lost, a second passed", do: func(e env) { e.h.lose(); time.Sleep(time.Second) }, phase: phaseStopping},
			{name: "another second passed", do: func(e env) { time.Sleep(time.Second) }, phase: phaseStopped, check: func(t *testing.T, e env) {
				assert.Equal(t, 1, e.h.electorCount(), "never campaigned again")
				assert.True(t, e.leader.running())
				e.leader.unstick()
			}},
		},
		trace: []string{"syncing", "standby", "leading", "stopping", "stopped"},
		wantErr: func(t *testing.T, err error) {
			assert.ErrorIs(t, err, leaderelection.ErrLeaderElectionLost)
			assert.ErrorContains(t, err, "leader-only runnables of term 1 still running after 1s, not campaigning again: [controller leader]")
		},
	}, {
		name:     "ctx ends while the re-campaign waits for the leaders",
		election: true,
		opts:     Options{LeaderElectionRecampaign: true, GracefulShutdownTimeout: time.Minute},
		stuck:    true,
		steps: []step{
			{name: "won", do: func(e env) { e.h.win() }, phase: phaseLeading, leading: true},
			{name: "lost", do: func(e env) { e.h.lose() }, phase: phaseLeading, check: func(t *testing.T, e env) {
				assert.False(t, e.h.m.holdsLease(), "leading by phase, not by lease")
			}},
			{name: "ctx ended", do: cancel, phase: phaseStopping},
			{name: "leader returned", do: func(e env) { e.leader.unstick() }, phase: phaseStopped, check: func(t *testing.T, e env) {
				assert.Equal(t, 1, e.h.electorCount())
			}},
		},
		trace: []string{"syncing", "standby", "leading", "stopping", "stopped"},
	}, {
		name:     "the campaign ends before leading",
		election: true,
		steps: []step{
			{name: "quit", do: func(e env) { e.h.quit() }, phase: phaseStopped},
		},
		trace:   []string{"syncing", "standby", "stopping", "stopped"},
		wantErr: func(t *testing.T, err error) { assert.ErrorContains(t, err, "elector stopped before leading") },
	}, {
		name:     "a runnable fails on a standby",
		election: true,
		steps: []step{
			{name: "failed", do: func(e env) { e.other.failWith(errors.New("boom")) }, phase: phaseStopped},
		},
		trace:   []string{"syncing", "standby", "stopping", "stopped"},
		wantErr: func(t *testing.T, err error) { assert.EqualError(t, err, "manager: controller other: boom") },
	}, {
		name:  "graceful shutdown timeout names what still runs",
		opts:  Options{GracefulShutdownTimeout: 2 * time.Second},
		stuck: true,
		steps: []step{
			{name: "started", do: none, phase: phaseLeading, leading: true},
			{name: "ctx ended", do: cancel, phase: phaseStopping, leading: true},
			{name: "timed out", do: func(env) { time.Sleep(2 * time.Second) }, phase: phaseStopped, leading: true, check: func(t *testing.T, e env) {
				assert.True(t, e.leader.running())
				e.leader.unstick()
			}},
		},
		trace: []string{"syncing", "standby", "leading", "stopping", "stopped"},
		wantErr: func(t *testing.T, err error) {
			// The others and the caches are cancelled but not waited for once
			// the deadline passed; they may still run too.
			assert.Regexp(t, `^manager: graceful shutdown timed out after 2s; still running: \[.*controller leader.*\]$`, err.Error())
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, tt.election, tt.opts)
				e := env{h: h, leader: newRecorder("leader", true), other: newRecorder("other", false)}
				if tt.stuck {
					e.leader.stuck = make(chan struct{})
				}
				require.NoError(t, h.add(e.leader))
				require.NoError(t, h.add(e.other))
				assert.Equal(t, phaseIdle, h.m.currentPhase())
				h.start()
				synctest.Wait()
				for _, s := range tt.steps {
					s.do(e)
					synctest.Wait()
					require.Equal(t, s.phase, h.m.currentPhase(), "after %q", s.name)
					assert.Equal(t, s.leading, h.m.holdsLease(), "holdsLease after %q", s.name)
					if s.check != nil {
						s.check(t, e)
					}
				}
				err := h.result()
				if tt.wantErr == nil {
					assert.NoError(t, err)
				} else {
					tt.wantErr(t, err)
				}
				assert.Equal(t, tt.trace, h.phases())
				assert.ErrorContains(t, h.m.Add(newRecorder("too-late", true)), "manager is stopping")
				assert.EqualError(t, h.m.Start(context.Background()), "manager: already started")
			})
		})
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
