package manager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kubeloop/kubeloop/cache"
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
	if !m.phase.CompareAndSwap(int32(phaseIdle), int32(phaseSyncing)) {
		return errors.New("manager: already started")
	}
	m.logger.V(1).Info("lifecycle", "from", phaseIdle.String(), "phase", phaseSyncing.String())
	defer utilnet.CloseIdleConnectionsFor(m.httpClient.Transport)
	live, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(m.failures.Context(), cancel)() // a runnable's failure ends live too
	l := &lifecycle{
		m:    m,
		live: live,
		// Runnables get the caller's values and the manager's logger,
		// but the manager alone decides when each group's context ends.
		base: logr.NewContext(context.WithoutCancel(ctx), m.logger),
	}
	// The run loop: each phase's method does its work and returns the
	// next phase (phase.go draws the transitions).
	for p := phaseSyncing; ; {
		switch p {
		case phaseSyncing:
			p = l.sync()
		case phaseStandby:
			p = l.standby() // recampaign.go
		case phaseLeading:
			p = l.lead() // recampaign.go
		case phaseStopping:
			err := l.shutdown() // stop.go
			m.enter(phaseStopped)
			return err
		}
		m.enter(p)
	}
}

// sync is the syncing phase: it starts the servers, the event
// broadcaster and the caches, waits until the caches have synced, starts
// the runnables that need no leadership and begins the campaign (→
// standby). Any failure, or the run's end, leads to stopping.
func (l *lifecycle) sync() phase {
	m := l.m
	if err := m.startServers(); err != nil { // servers.go
		m.fail(err)
		return phaseStopping
	}
	if err := m.events.Start(l.base); err != nil {
		m.fail(fmt.Errorf("manager: start events: %w", err))
		return phaseStopping
	}
	// Caches first; nothing else starts until they have synced.
	m.caches.Prepend(m.cache)
	m.caches.Start(l.base)
	if !m.waitForCaches(l.live) {
		return l.ended()
	}
	m.cachesSynced.Store(true)
	m.logger.V(1).Info("caches synced")
	m.others.Start(l.base)
	if m.electors != nil {
		if err := l.beginCampaign(); err != nil { // election.go
			m.fail(err)
			return phaseStopping
		}
	}
	return phaseStandby
}

// waitForCaches waits until every cache started so far has synced, or
// until a cache reports that a kind cannot be listed or watched (RBAC
// forbidden, not served): that kind would never sync, and waiting for it
// would keep every other runnable from starting. The failure is logged and
// Start carries on; /readyz stays unready while it lasts, and a
// controller of that kind fails after its CacheSyncTimeout with an error
// naming it. It gives up when ctx ends.
func (m *Manager) waitForCaches(ctx context.Context) bool {
	m.mu.Lock()
	caches := append([]cache.Cache{m.cache}, m.extraCaches...)
	m.mu.Unlock()
	for {
		poll, cancel := context.WithTimeout(ctx, cacheHealthPoll)
		synced := true
		for _, c := range caches {
			synced = synced && c.WaitForCacheSync(poll)
		}
		cancel()
		var errs []error
		for _, c := range caches {
			errs = append(errs, c.Healthy())
		}
		switch err := errors.Join(errs...); {
		case synced:
			return true
		case ctx.Err() != nil:
			return false
		case err != nil:
			m.logger.Error(err, "caches cannot sync some kinds; starting the runnables anyway")
			return true
		}
	}
}

// cacheHealthPoll is how often waitForCaches asks the caches for failing
// kinds.
const cacheHealthPoll = 250 * time.Millisecond
