package manager

import (
	"context"
	"fmt"
	"time"

	"github.com/kubeloop/kubeloop/leaderelection"
	"github.com/kubeloop/kubeloop/manager/internal/runnables"
)

// elector is what the run loop needs of a leaderelection.Elector; the
// lifecycle tests give a fake.
type elector interface {
	Run(ctx context.Context) error
	Elected() <-chan struct{}
	IsLeader() bool
	Release(ctx context.Context)
	// Remaining is the term's fence (client.Fence): the leader-only
	// runnables of the term get it in their context (see lead).
	Remaining() (time.Duration, error)
}

var _ elector = (*leaderelection.Elector)(nil)

// leaseElectors returns the manager's source of electors, one per term (a
// leaderelection.Elector runs once): the first is built now, so that New
// reports bad election options, the later ones with its identity.
func (m *Manager) leaseElectors() (func() (elector, error), error) {
	first, err := m.newElector(m.opts.LeaderElectionIdentity)
	if err != nil {
		return nil, err
	}
	identity := first.Identity()
	next := elector(first)
	return func() (elector, error) {
		if e := next; e != nil {
			next = nil
			return e, nil
		}
		return m.newElector(identity)
	}, nil
}

// newElector returns an elector for the manager's lease with the given
// holder identity ("" for the default).
func (m *Manager) newElector(identity string) (*leaderelection.Elector, error) {
	o := m.opts
	e, err := leaderelection.New(m.cfg, leaderelection.Options{
		ID:            o.LeaderElectionID,
		Namespace:     o.LeaderElectionNamespace,
		Identity:      identity,
		LeaseDuration: o.LeaseDuration,
		RenewDeadline: o.RenewDeadline,
		RetryPeriod:   o.RetryPeriod,
		Labels:        o.LeaderElectionLabels,
		HTTPClient:    m.httpClient,
		Logger:        m.logger.WithName("leaderelection"),
		// Every term's elector sets the same leader_election_master_status
		// series: 0 from New, 1 while it leads, 0 once Run returned.
		Metrics: m.registry,
		// The manager releases the lease itself, and only once every
		// leader-only runnable has returned.
		ReleaseOnCancel: false,
	})
	if err != nil {
		return nil, fmt.Errorf("manager: %w", err)
	}
	return e, nil
}

// holdsLease reports whether this manager leads right now by its lease:
// with leader election, whether the current term's elector holds the
// Lease and renewed it less than RenewDeadline ago
// (leaderelection.Elector.IsLeader); without it, always (there is no lease
// to lose). Any goroutine may ask; it makes no request.
//
// It is the question a fenced write asks just before it is sent: the
// leader-only runnables' contexts carry the term's elector as their
// client.Fence (see lead in recampaign.go), whose Remaining agrees with
// IsLeader. It deliberately differs
// from currentPhase() == phaseLeading: during a graceful stop the
// leader-only runnables finish their work while the lease is still held
// (it is released only after they returned), and between a lost lease
// and the loop's move to standby the phase still says leading while the
// lease does not.
func (m *Manager) holdsLease() bool {
	if m.electors == nil {
		return true
	}
	c := m.campaign.Load()
	return c != nil && c.e.IsLeader()
}

// campaign is one elector's Run in a goroutine. Manager.campaign holds
// the current one from beginCampaign until the run loop takes its result
// (endCampaign).
type campaign struct {
	e      elector
	cancel context.CancelFunc
	done   chan struct{} // closed once Run returned
	err    error         // Run's result, set before done is closed
}

// beginCampaign begins a campaign with the next elector and makes it the
// current one (holdsLease asks it).
func (l *lifecycle) beginCampaign() error {
	e, err := l.m.electors()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(l.base)
	c := &campaign{e: e, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer cancel() // free the context
		c.err = e.Run(ctx)
	}()
	l.m.campaign.Store(c)
	return nil
}

// endCampaign takes the result of the current campaign, whose Run has
// returned: it is no longer current, so the shutdown does not stop it
// and its error is reported once.
func (l *lifecycle) endCampaign() error {
	c := l.m.campaign.Swap(nil)
	<-c.done
	return c.err
}

// stop cancels the campaign and waits until Run returned or ctx ended; it
// returns Run's error, if any.
func (c *campaign) stop(ctx context.Context) error {
	c.cancel()
	if runnables.Within(ctx, c.done) {
		return c.err
	}
	return nil
}
