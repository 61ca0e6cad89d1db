package manager

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/kubeloop/kubeloop/leaderelection"
)

// newElector returns an elector for the manager's lease with the given
// holder identity ("" for the default). The manager builds one for each
// term: a leaderelection.Elector runs once.
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

// recampaign follows the loss of the lease (lost, wrapping
// leaderelection.ErrLeaderElectionLost) when LeaderElectionRecampaign is
// set. The elector has already stopped leading: RenewDeadline after its
// last renewal, before any standby may take over. recampaign cancels the
// leader-only runnables of the term and waits for every one to return,
// within GracefulShutdownTimeout; the caches and the other runnables keep
// running. It then makes a new elector with the same identity and runs it,
// and returns its Elected channel and Run's result channel; Start starts
// the leader-only runnables again on winning.
//
// It returns nil channels and a nil error when ctx ended or a runnable
// failed meanwhile (Start's loop then shuts down), and an error wrapping
// lost when the runnables did not return in time: campaigning while one
// of them may still act could make two leaders, so the manager stops.
func (m *Manager) recampaign(ctx context.Context, st *stopState, lost error) (<-chan struct{}, chan error, error) {
	m.mu.Lock()
	term := m.term
	g := m.leaders
	// Adds from now on wait for the next term (and the WaitGroup is not
	// added to while it is waited on).
	g.started = false
	m.mu.Unlock()
	if st.cancelElection != nil {
		st.cancelElection() // the old elector returned; free its context
	}
	m.logger.Info("lost the lease; stopping the leader-only runnables, keeping the caches, to campaign again", "term", term)
	m.cancelGroup(g)

	returned := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(returned)
	}()
	var timeout <-chan time.Time
	if d := m.opts.GracefulShutdownTimeout; d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-returned:
	case <-timeout:
		m.mu.Lock()
		var still []string
		for e := range g.running {
			still = append(still, e.name)
		}
		m.mu.Unlock()
		sort.Strings(still)
		return nil, nil, fmt.Errorf("%w; leader-only runnables of term %d still running after %s, not campaigning again: %v",
			lost, term, m.opts.GracefulShutdownTimeout, still)
	case <-ctx.Done():
		return nil, nil, nil
	case <-m.failed:
		return nil, nil, nil
	}

	m.mu.Lock()
	if m.stopping {
		m.mu.Unlock()
		return nil, nil, nil
	}
	g.ctx, g.cancel = context.WithCancel(st.base)
	g.pending = slices.Clone(g.members) // every leader-only runnable, those added meanwhile included
	n := len(g.pending)
	m.mu.Unlock()

	e, err := m.newElector(m.elector.Identity())
	if err != nil {
		return nil, nil, fmt.Errorf("%w; campaign again: %w", lost, err)
	}
	m.elector = e
	electionCtx, cancel := context.WithCancel(st.base)
	done := make(chan error, 1)
	st.cancelElection, st.electionDone = cancel, done
	go func() { done <- e.Run(electionCtx) }()
	m.logger.Info("leader-only runnables of the lost term returned; campaigning again", "term", term, "runnables", n)
	return e.Elected(), done, nil
}
