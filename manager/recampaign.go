package manager

import (
	"errors"
	"fmt"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/leaderelection"
)

// standby waits for the current campaign: won (→ leading), ended (see
// campaignEnded) or the run's end (→ stopping). Without leader election it
// passes to leading at once.
func (l *lifecycle) standby() phase {
	c := l.m.campaign.Load()
	if c == nil {
		return phaseLeading
	}
	select {
	case <-c.e.Elected():
		if isClosed(c.done) { // won, but already lost again
			return l.campaignEnded()
		}
		return phaseLeading
	case <-c.done:
		return l.campaignEnded()
	case <-l.live.Done():
		return l.ended()
	}
}

// lead starts the term's leader-only runnables, then waits for the
// campaign's end (the lease is lost; see campaignEnded) or the run's end
// (→ stopping).
func (l *lifecycle) lead() phase {
	m := l.m
	c := m.campaign.Load()
	var done <-chan struct{} // never closed without leader election
	ctx := l.base
	if c != nil {
		l.term++
		m.logger.Info("elected leader; starting leader-only runnables", "term", l.term)
		done = c.done
		// Fenced writes: the term's runnables (and so the reconciles of
		// its controllers) write only while this term's elector leads.
		// Each term has its own elector, so a runnable of a lost term
		// stays fenced after a later term began.
		ctx = client.WithFence(ctx, c.e)
	}
	m.leaders.Start(ctx)
	if !isClosed(m.elected) { // the first term
		close(m.elected)
	}
	select {
	case <-done:
		return l.campaignEnded()
	case <-l.live.Done():
		return l.ended()
	}
}

// campaignEnded follows the end of the current campaign's Run:
// with LeaderElectionRecampaign and a lost lease, the re-campaign (→
// standby); otherwise a failure (→ stopping; a lost lease cancels every
// context at once).
func (l *lifecycle) campaignEnded() phase {
	err := l.endCampaign()
	if err == nil {
		err = errors.New("leader election ended unexpectedly")
	}
	lost := errors.Is(err, leaderelection.ErrLeaderElectionLost)
	if lost && l.m.opts.LeaderElectionRecampaign {
		next, rerr := l.recampaign(err)
		if rerr == nil {
			return next
		}
		err = rerr
	}
	l.lost = lost
	l.m.fail(fmt.Errorf("manager: %w", err))
	return phaseStopping
}

// recampaign is the leading → standby transition after the lease was lost
// (lost wraps leaderelection.ErrLeaderElectionLost). The elector has
// already stopped leading: RenewDeadline after its last renewal, before
// any standby may take over. recampaign stops the term's leader-only
// runnables and waits for every one to return, within
// GracefulShutdownTimeout; the caches and the other runnables keep
// running. Then every leader-only runnable, those added meanwhile
// included, is made pending for the next term, and a new elector with the
// same identity campaigns.
//
// It returns stopping when the run ended meanwhile, and an error wrapping
// lost when the runnables did not return in time: campaigning while one
// of them may still act could make two leaders, so the manager stops.
func (l *lifecycle) recampaign(lost error) (phase, error) {
	m := l.m
	m.logger.Info("lost the lease; stopping the leader-only runnables, keeping the caches, to campaign again", "term", l.term)
	ctx, cancel := m.grace(l.live)
	defer cancel()
	still := m.leaders.Stop(ctx)
	if l.live.Err() != nil {
		return l.ended(), nil
	}
	if len(still) > 0 {
		return phaseStopping, fmt.Errorf("%w; leader-only runnables of term %d still running after %s, not campaigning again: %v",
			lost, l.term, m.opts.GracefulShutdownTimeout, still)
	}
	n := m.leaders.Restart()
	if err := l.beginCampaign(); err != nil {
		return phaseStopping, fmt.Errorf("%w; campaign again: %w", lost, err)
	}
	m.logger.Info("leader-only runnables of the lost term returned; campaigning again", "term", l.term, "runnables", n)
	return phaseStandby, nil
}
