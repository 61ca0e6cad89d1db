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

	"github.com/kubeloop/kubeloop/cache"
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
		slow          *unsyncedCache // with unsynced
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
		name       string
		election   bool
		opts       Options
		stuck      bool // the leader-only runnable ignores its context until unstuck
		stuckOther bool // the runnable that needs no leadership does
		unsynced   bool // a cache that syncs only when the test says
		steps      []step
		trace      []string
		wantErr    func(t *testing.T, err error)
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
	}, {
		name:     "ctx ends while the caches sync: nothing else started, a normal stop",
		election: true,
		unsynced: true,
		steps: []step{
			{name: "syncing", do: none, phase: phaseSyncing, check: func(t *testing.T, e env) {
				assert.False(t, e.other.running(), "runnables wait for the caches")
				assert.False(t, e.leader.running())
				assert.Zero(t, e.h.electorCount(), "no campaign before the caches synced")
				assert.False(t, e.h.m.cachesSynced.Load())
			}},
			{name: "ctx ended", do: cancel, phase: phaseStopped, check: func(t *testing.T, e env) {
				assert.Zero(t, e.other.startCount())
				assert.Zero(t, e.leader.startCount())
				assert.False(t, isClosed(e.h.m.Elected()))
			}},
		},
		trace: []string{"syncing", "stopping", "stopped"},
	}, {
		name:     "the caches sync late: then the others start and the campaign begins",
		election: true,
		unsynced: true,
		steps: []step{
			{name: "syncing", do: none, phase: phaseSyncing},
			{name: "synced", do: func(e env) { close(e.slow.synced) }, phase: phaseStandby, check: func(t *testing.T, e env) {
				assert.True(t, e.other.running())
				assert.True(t, e.h.m.cachesSynced.Load())
				assert.Equal(t, 1, e.h.electorCount())
			}},
			{name: "won", do: func(e env) { e.h.win() }, phase: phaseLeading, leading: true},
			{name: "ctx ended", do: cancel, phase: phaseStopped},
		},
		trace: []string{"syncing", "standby", "leading", "stopping", "stopped"},
	}, {
		name:     "a runnable fails while the caches sync",
		unsynced: true,
		steps: []step{
			{name: "failed", do: func(e env) { e.slow.fail <- errors.New("boom") }, phase: phaseStopped, leading: true, check: func(t *testing.T, e env) {
				assert.Zero(t, e.other.startCount())
			}},
		},
		trace:   []string{"syncing", "stopping", "stopped"},
		wantErr: func(t *testing.T, err error) { assert.EqualError(t, err, "manager: *manager.unsyncedCache: boom") },
	}, {
		name:     "a leader-only runnable fails while leading",
		election: true,
		opts:     Options{LeaderElectionRecampaign: true, LeaderElectionReleaseOnCancel: true},
		steps: []step{
			{name: "won", do: func(e env) { e.h.win() }, phase: phaseLeading, leading: true},
			{name: "failed", do: func(e env) { e.leader.failWith(errors.New("boom")) }, phase: phaseStopped, check: func(t *testing.T, e env) {
				assert.False(t, e.other.running())
				assert.True(t, e.h.current().released.Load(), "every leader-only runnable returned: released")
				assert.Equal(t, 1, e.h.electorCount(), "a failure is no re-campaign")
			}},
		},
		trace:   []string{"syncing", "standby", "leading", "stopping", "stopped"},
		wantErr: func(t *testing.T, err error) { assert.EqualError(t, err, "manager: controller leader: boom") },
	}, {
		name:     "won and lost before the loop saw the win: re-campaign from standby",
		election: true,
		opts:     Options{LeaderElectionRecampaign: true},
		steps: []step{
			{name: "won and lost", do: func(e env) {
				close(e.h.current().win)
				close(e.h.current().lose)
			}, phase: phaseStandby, check: func(t *testing.T, e env) {
				// The loop saw the win, or the end, first: either way the
				// next campaign runs and no leader-only runnable runs.
				assert.False(t, e.leader.running())
			}},
			{name: "ctx ended", do: cancel, phase: phaseStopped},
		},
		wantErr: nil,
	}, {
		name:       "graceful shutdown timeout names a runnable that needs no leadership",
		opts:       Options{GracefulShutdownTimeout: 2 * time.Second},
		stuckOther: true,
		steps: []step{
			{name: "started", do: none, phase: phaseLeading, leading: true},
			{name: "ctx ended", do: cancel, phase: phaseStopping, leading: true, check: func(t *testing.T, e env) {
				assert.False(t, e.leader.running(), "the leaders returned first")
			}},
			{name: "timed out", do: func(env) { time.Sleep(2 * time.Second) }, phase: phaseStopped, leading: true, check: func(t *testing.T, e env) {
				assert.True(t, e.other.running())
				e.other.unstick()
			}},
		},
		trace: []string{"syncing", "standby", "leading", "stopping", "stopped"},
		wantErr: func(t *testing.T, err error) {
			assert.Regexp(t, `^manager: graceful shutdown timed out after 2s; still running: \[.*controller other.*\]$`, err.Error())
			assert.NotContains(t, err.Error(), "controller leader")
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
				if tt.stuckOther {
					e.other.stuck = make(chan struct{})
				}
				require.NoError(t, h.add(e.leader))
				require.NoError(t, h.add(e.other))
				if tt.unsynced {
					e.slow = newUnsyncedCache(t, h.m)
					require.NoError(t, h.m.Add(e.slow))
				}
				assert.Equal(t, phaseIdle, h.m.currentPhase())
				require.NoError(t, h.m.check(), "before Start")
				h.start()
				synctest.Wait()
				require.NoError(t, h.m.check(), "after Start, phase %s", h.m.currentPhase())
				for _, s := range tt.steps {
					s.do(e)
					synctest.Wait()
					require.Equal(t, s.phase, h.m.currentPhase(), "after %q", s.name)
					require.NoError(t, h.m.check(), "after %q", s.name)
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
				if tt.trace != nil {
					assert.Equal(t, tt.trace, h.phases())
				}
				require.NoError(t, h.m.check(), "after Start returned")
				assert.ErrorContains(t, h.m.Add(newRecorder("too-late", true)), "manager is stopping")
				assert.EqualError(t, h.m.Start(context.Background()), "manager: already started")
			})
		})
	}
}

// unsyncedCache is a real cache whose WaitForCacheSync also waits until
// synced is closed (a kind that takes long to list) and whose Start
// returns the error sent on fail.
type unsyncedCache struct {
	cache.Cache
	synced chan struct{}
	fail   chan error
}

func newUnsyncedCache(t *testing.T, m *Manager) *unsyncedCache {
	c, err := cache.New(m.GetConfig(), cache.Options{Scheme: m.GetScheme(), Mapper: m.GetRESTMapper(), HTTPClient: m.GetHTTPClient()})
	require.NoError(t, err)
	return &unsyncedCache{Cache: c, synced: make(chan struct{}), fail: make(chan error, 1)}
}

func (c *unsyncedCache) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Cache.Start(ctx) }()
	select {
	case err := <-done:
		return err
	case err := <-c.fail:
		cancel()
		<-done
		return err
	}
}

func (c *unsyncedCache) WaitForCacheSync(ctx context.Context) bool {
	select {
	case <-c.synced:
		return c.Cache.WaitForCacheSync(ctx)
	case <-ctx.Done():
		return false
	}
}

// TestCheckFindsInconsistencies breaks the lifecycle's state by hand and
// asserts that check names what is wrong. The groups' own invariants are
// broken and checked in internal/runnables (TestCheckFindsBrokenGroups).
func TestCheckFindsInconsistencies(t *testing.T) {
	tests := []struct {
		name    string
		breakIt func(m *Manager)
		want    string
	}{{
		name:    "leading with idle groups",
		breakIt: func(m *Manager) { m.phase.Store(int32(phaseLeading)) },
		want:    "phase leading: group caches is idle, want one of [running]",
	}, {
		name:    "Elected closed before the caches synced",
		breakIt: func(m *Manager) { close(m.elected) },
		want:    "phase idle: Elected closed is true",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(&rest.Config{Host: "http://127.0.0.1:1"}, Options{Metrics: MetricsOptions{BindAddress: "0"}})
			require.NoError(t, err)
			require.NoError(t, m.check())
			tt.breakIt(m)
			assert.ErrorContains(t, m.check(), tt.want)
		})
	}
}

// TestEnterRefusesUnknownMoves: a move not in transitions is a bug and
// panics, naming both phases.
func TestEnterRefusesUnknownMoves(t *testing.T) {
	m, err := New(&rest.Config{Host: "http://127.0.0.1:1"}, Options{Metrics: MetricsOptions{BindAddress: "0"}})
	require.NoError(t, err)
	assert.PanicsWithValue(t, "manager: lifecycle cannot move from idle to leading", func() { m.enter(phaseLeading) })
	m.phase.Store(int32(phaseStopped))
	assert.PanicsWithValue(t, "manager: lifecycle cannot move from stopped to syncing", func() { m.enter(phaseSyncing) })
}
