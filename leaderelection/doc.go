// Package leaderelection elects one leader among the replicas of a
// controller, using a coordination.k8s.io/v1 Lease as the lock.
//
// It is a thin, single-use shell around kubeloop's lease core (the one
// sharding uses too), which follows client-go's leader election: the same
// Lease fields, timings, validation rule and expiry judgement.
//
//	e, err := leaderelection.New(cfg, leaderelection.Options{ID: "my-operator", Namespace: "ops"})
//	...
//	go func() { errCh <- e.Run(ctx) }()
//	select {
//	case <-e.Elected(): // lead until Run returns
//	case err := <-errCh:
//	}
//
// The manager package runs an Elector for you when manager.Options.LeaderElection
// is set; use this package directly only to elect outside a manager.
//
// Guarantees:
//   - Elected() is closed at most once, when this candidate acquires the lease.
//   - Run returns nil after ctx ends, and an error wrapping ErrLeaderElectionLost
//     (naming the lease) as soon as RenewDeadline has passed since the last
//     successful renewal was sent, while ctx was live (client-go's elector
//     would wait up to a RetryPeriod longer), or at once when a read shows
//     that another candidate holds the lease. It never campaigns
//     again: a candidate that lost the lease is expected to stop its
//     leader-only work and exit, or, once that work has stopped, to
//     campaign with a new Elector of the same Identity (the manager does so
//     with LeaderElectionRecampaign); if the Lease still names it, the new
//     Elector renews it at once.
//   - The timings follow client-go's rule, LeaseDuration > RenewDeadline >
//     1.2*RetryPeriod; the Lease's leaseDurationSeconds is LeaseDuration
//     rounded up to whole seconds (1.9s is stored as 2s, never truncated
//     to 1s). Standbys judge expiry by the duration stored in the Lease,
//     counted on their own monotonic clock from when they saw the Lease
//     last change, whatever their own LeaseDuration and whatever the
//     Lease's renewTime says. IsLeader is true only until RenewDeadline
//     after the last successful renewal was sent. So a deposed leader has
//     stopped leading at least (stored LeaseDuration - RenewDeadline)
//     before a standby takes over; that margin must cover the time
//     leader-only work takes to stop.
//   - With ReleaseOnCancel, a leader whose ctx ended gives the lease up (empty
//     holder, one-second duration) before Run returns, so a standby takes over
//     within about one RetryPeriod instead of waiting LeaseDuration. Cancel
//     ctx only after every piece of leader-only work has stopped.
//   - Release, called after Run returned, gives the lease up on the
//     caller's schedule: the manager releases only once every leader-only
//     runnable has returned. It never touches a lease held by another
//     candidate.
//   - An Elector is a client.Fence (Remaining): a context given it with
//     client.WithFence fails every write with an error wrapping
//     client.ErrLeaseLost once IsLeader is false, and bounds each admitted
//     request by the time left. The manager fences its leader-only
//     runnables with the Elector of their term. Run's lost-leadership error
//     wraps client.ErrLeaseLost too.
//   - Run returns only after every goroutine it started has exited.
//   - leader_election_master_status{name} (1 while leading, else 0) and
//     leader_election_slowpath_total{name} (renewals that had to read the
//     Lease first because the leader's copy was stale: someone else wrote
//     it, or the last renewal failed; client-go's slow path) are
//     registered on Options.Metrics when it is set, both at 0, with
//     client-go's and controller-runtime's help texts; no global registry
//     is used.
//   - Lease requests time out after max(1s, RenewDeadline/2), so one hung
//     request cannot by itself cost the lease.
//
// As in client-go, every replica acts on its own monotonic clock, so the
// timings tolerate any clock offset between replicas, but not a clock that
// runs much faster or slower than the others. IsLeader (and Remaining,
// its fence form) is the question a fenced write asks just before it is
// sent.
package leaderelection
