// Package leaderelection elects one leader among the replicas of a
// controller, using a coordination.k8s.io/v1 Lease as the lock.
//
// It is a thin, single-use shell around client-go's
// k8s.io/client-go/tools/leaderelection elector and its resourcelock.LeaseLock:
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
//     (naming the lease) as soon as the renewal deadline passes without a
//     successful renewal while ctx was live. It never campaigns again: a
//     candidate that lost the lease is expected to stop its leader-only work
//     and exit.
//   - With ReleaseOnCancel, a leader whose ctx ended gives the lease up (empty
//     holder, one-second duration) before Run returns, so a standby takes over
//     within about one RetryPeriod instead of waiting LeaseDuration. Cancel
//     ctx only after every piece of leader-only work has stopped.
//   - Release, called after Run returned, gives the lease up on the
//     caller's schedule: the manager releases only once every leader-only
//     runnable has returned. It never touches a lease held by another
//     candidate.
//   - Run returns only after every goroutine it started has exited.
//   - leader_election_master_status{name} (1 while leading, else 0) is
//     registered on Options.Metrics when it is set; no global registry is used.
//   - Lease requests time out after max(1s, RenewDeadline/2), so one hung
//     request cannot by itself cost the lease.
//
// As in client-go, there is no fencing: a leader acts on its local clock, so
// the timings tolerate clock offset between replicas but not a clock that
// runs much faster than the others.
package leaderelection
