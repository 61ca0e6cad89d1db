package manager

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/leaderelection"
)

// Start runs the manager until ctx ends, a runnable returns an error, or
// the lease is lost, then shuts down. In order it starts: the HTTP servers
// (metrics, probes, pprof) and the event broadcaster; the caches, waiting
// for them to sync; the runnables that need no leadership; the election;
// and, once elected, the leader-only runnables. With
// LeaderElectionRecampaign, losing the lease stops only the leader-only
// runnables and campaigns again (recampaign.go).
//
// The shutdown stops them in reverse: leader-only runnables, then the
// lease (released if LeaderElectionReleaseOnCancel and every leader-only
// runnable returned), other runnables, caches, servers, events; all
// within GracefulShutdownTimeout. When the lease is lost, every context is
// cancelled at once.
//
// Start returns nil after ctx ended and everything stopped; the first
// runnable error (joined with errors returned while stopping); an error
// wrapping leaderelection.ErrLeaderElectionLost; or, when the timeout
// passed with goroutines still running, an error naming them. With
// LeaderElectionRecampaign, a lost lease ends Start only when the
// leader-only runnables did not return within GracefulShutdownTimeout.
// Start may be called once.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return errors.New("manager: already started")
	}
	m.started = true
	// Runnables get the caller's values and the manager's logger, but the
	// manager alone decides when each group's context ends.
	base := logr.NewContext(context.WithoutCancel(ctx), m.logger)
	for _, g := range []*group{m.caches, m.others, m.leaders} {
		g.ctx, g.cancel = context.WithCancel(base)
	}
	m.mu.Unlock()

	st := &stopState{base: base}
	defer utilnet.CloseIdleConnectionsFor(m.httpClient.Transport)

	if err := m.startServers(); err != nil {
		m.fail(err)
		return m.shutdown(st)
	}
	if err := m.events.start(base); err != nil {
		m.fail(fmt.Errorf("manager: start events: %w", err))
		return m.shutdown(st)
	}

	// Caches first; nothing else starts until they have synced.
	m.mu.Lock()
	m.caches.pending = append([]Runnable{m.cache}, m.caches.pending...)
	m.startGroupLocked(m.caches)
	m.mu.Unlock()
	if !m.waitForCaches(ctx) {
		return m.shutdown(st)
	}
	m.cachesSynced.Store(true)
	m.logger.V(1).Info("caches synced")

	m.mu.Lock()
	if !m.stopping {
		m.startGroupLocked(m.others)
	}
	m.mu.Unlock()

	var elected <-chan struct{}
	var electionDone chan error
	if m.elector == nil {
		m.startLeaders()
	} else {
		electionCtx, cancel := context.WithCancel(base)
		st.cancelElection = cancel
		electionDone = make(chan error, 1)
		st.electionDone = electionDone
		go func() { electionDone <- m.elector.Run(electionCtx) }()
		elected = m.elector.Elected()
	}

	for {
		select {
		case <-elected:
			elected = nil
			m.startLeaders()
		case <-ctx.Done():
			m.logger.Info("stopping: context done")
			return m.shutdown(st)
		case <-m.failed:
			return m.shutdown(st)
		case err := <-electionDone:
			st.electionDone = nil
			if err == nil {
				err = errors.New("leader election ended unexpectedly")
			}
			if errors.Is(err, leaderelection.ErrLeaderElectionLost) && m.opts.LeaderElectionRecampaign {
				// recampaign.go: stop the term's runnables, keep the
				// caches, campaign again.
				elected, electionDone, err = m.recampaign(ctx, st, err)
				if err == nil {
					continue // nil channels when ctx ended or a runnable failed meanwhile
				}
			}
			if errors.Is(err, leaderelection.ErrLeaderElectionLost) {
				st.lost = true
			}
			m.fail(fmt.Errorf("manager: %w", err))
			return m.shutdown(st)
		}
	}
}

// waitForCaches waits until every cache started so far has synced, or
// until a cache reports that a kind cannot be listed or watched (RBAC
// forbidden, not served): that kind would never sync, and waiting for it
// would keep every other runnable from starting. The failure is logged and
// Start carries on; /readyz stays unready while it lasts, and a
// controller of that kind fails after its CacheSyncTimeout with an error
// naming it. It gives up when ctx ends or a runnable fails.
func (m *Manager) waitForCaches(ctx context.Context) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m.mu.Lock()
	caches := append([]cache.Cache{m.cache}, m.extraCaches...)
	m.mu.Unlock()
	synced := make(chan bool, 1)
	go func() {
		for _, c := range caches {
			if !c.WaitForCacheSync(ctx) {
				synced <- false
				return
			}
		}
		synced <- true
	}()
	tick := time.NewTicker(cacheHealthPoll)
	defer tick.Stop()
	for {
		select {
		case ok := <-synced:
			return ok
		case <-m.failed:
			return false
		case <-ctx.Done():
			return false
		case <-tick.C:
			var errs []error
			for _, c := range caches {
				errs = append(errs, c.Healthy())
			}
			if err := errors.Join(errs...); err != nil {
				m.logger.Error(err, "caches cannot sync some kinds; starting the runnables anyway")
				return true
			}
		}
	}
}

// cacheHealthPoll is how often waitForCaches asks the caches for failing
// kinds.
const cacheHealthPoll = 250 * time.Millisecond

// startLeaders starts the leader-only runnables, unless the stop began.
func (m *Manager) startLeaders() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopping {
		return
	}
	if m.elector != nil {
		m.term++
		m.logger.Info("elected leader; starting leader-only runnables", "term", m.term)
	}
	m.startGroupLocked(m.leaders)
	select {
	case <-m.elected: // a later term
	default:
		close(m.elected)
	}
}

// fail records err: the first error before the stop is Start's cause;
// later ones, except context cancellation, are joined to it.
func (m *Manager) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.stopping:
		if !errors.Is(err, context.Canceled) {
			m.logger.Error(err, "error while stopping")
			m.stopErrs = append(m.stopErrs, err)
		}
	case m.firstErr == nil:
		m.logger.Error(err, "stopping: runnable failed")
		m.firstErr = err
		close(m.failed)
	default:
		m.stopErrs = append(m.stopErrs, err)
	}
}

// stopState is what Start hands its shutdown.
type stopState struct {
	base           context.Context    // the parent of the groups' and the election's contexts
	lost           bool               // the lease was lost
	cancelElection context.CancelFunc // nil without leader election
	electionDone   chan error         // nil once the elector returned
}

// shutdown stops everything in reverse start order within the graceful
// timeout, then returns Start's result.
func (m *Manager) shutdown(st *stopState) error {
	m.mu.Lock()
	m.stopping = true
	groups := []*group{m.leaders, m.others, m.caches}
	m.mu.Unlock()

	timeout := m.opts.GracefulShutdownTimeout
	stopCtx, cancel := context.Background(), context.CancelFunc(func() {})
	if timeout >= 0 {
		stopCtx, cancel = context.WithTimeout(context.Background(), timeout)
	}
	defer cancel()

	if st.lost {
		// Leadership is gone: stop acting at once, everywhere.
		for _, g := range groups {
			m.cancelGroup(g)
		}
	}

	leadersStopped := m.stopGroup(stopCtx, m.leaders)
	if st.cancelElection != nil {
		st.cancelElection()
		if st.electionDone != nil {
			select {
			case err := <-st.electionDone:
				if err != nil { // lost while stopping
					m.fail(fmt.Errorf("manager: %w", err))
				}
			case <-stopCtx.Done():
			}
		}
		if m.opts.LeaderElectionReleaseOnCancel && leadersStopped && !st.lost && stopCtx.Err() == nil {
			m.elector.Release(stopCtx)
		}
	}
	m.stopGroup(stopCtx, m.others)
	m.stopGroup(stopCtx, m.caches)

	m.mu.Lock()
	servers := m.servers
	m.mu.Unlock()
	for _, s := range servers {
		s.shutdown(stopCtx)
	}
	m.events.stop()

	m.mu.Lock()
	defer m.mu.Unlock()
	errs := append([]error{m.firstErr}, m.stopErrs...)
	if stopCtx.Err() != nil {
		var still []string
		for _, g := range groups {
			for e := range g.running {
				still = append(still, e.name)
			}
		}
		// The deadline may pass just as the last runnable returns: only
		// runnables still running make it a timeout.
		if len(still) > 0 {
			slices.Sort(still)
			errs = append(errs, fmt.Errorf("manager: graceful shutdown timed out after %s; still running: %v", timeout, still))
		}
	}
	return errors.Join(errs...)
}

// cancelGroup cancels g's context; g's runnables should return.
func (m *Manager) cancelGroup(g *group) {
	m.mu.Lock()
	cancel := g.cancel
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// stopGroup cancels g and waits until its runnables returned or ctx ended,
// and reports whether they all returned.
func (m *Manager) stopGroup(ctx context.Context, g *group) bool {
	m.cancelGroup(g)
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		m.logger.Error(ctx.Err(), "graceful shutdown timed out", "group", g.name)
		return false
	}
}
