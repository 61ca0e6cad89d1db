// Package lease is the one lease core of kubeloop: leaderelection elects a
// leader with it and sharding holds its shard and sharder Leases with it.
// It holds a coordination.k8s.io/v1 Lease (acquire, renew, release), judges
// other holders' Leases expired, validates the timings, and answers the
// holder's question "may I still write?" for fenced writes.
//
// It is a small synchronous core with a thin concurrent shell: Record,
// Observer, Validate and Holder's TryAcquireOrRenew, Release and Valid are
// plain calls that take the time as an argument or from an injected Clock;
// Holder.Acquire and Holder.Renew are the retry loops around them.
//
// Guarantees:
//   - Expiry is judged by the observer's own clock, as client-go does: an
//     Observer remembers when, by the local monotonic clock, it first saw
//     the Lease's record as it is now, and the Lease expires
//     leaseDurationSeconds after that. The holder's renewTime is never
//     compared with the observer's clock, so clocks offset between replicas
//     (by seconds or hours) change nothing; only clocks that run at
//     different rates eat into the margin below.
//   - leaseDurationSeconds is the configured LeaseDuration rounded UP to
//     whole seconds (1.9s is written as 2s, never truncated to 1s), so
//     observers wait at least LeaseDuration.
//   - One validation (Validate), client-go's rule with every problem
//     joined: LeaseDuration > RenewDeadline > JitterFactor*RetryPeriod,
//     each positive, and LeaseDuration writable as int32 seconds.
//   - The holder's rule (Holder.Valid): a hold is valid while
//     now < start + RenewDeadline, where start is the local clock reading
//     taken just before the last successful write as holder (acquisition
//     or renewal) was sent. Any observer's clock for that write starts no
//     earlier than the write was stored, so no later than when it was
//     sent: the observer's expiry comes at least
//     written duration - RenewDeadline >= LeaseDuration - RenewDeadline > 0
//     after the holder's validity ended. That margin is what covers clock
//     rate differences and the time in-flight work needs to stop.
//     Holder.Remaining asks the same rule as a client.Fence: the time left,
//     or an error wrapping ErrLost (client.ErrLeaseLost and
//     sharding.ErrLeaseLost are the same sentinel) that names the Lease.
//   - Writes carry the resourceVersion they were decided on, so a takeover
//     decided on a stale read fails with a conflict instead of overwriting
//     a renewal it did not see.
//   - Release writes an empty holder (and a one-second duration), which
//     every observer counts as expired at once; it never touches a Lease
//     another holder holds.
package lease
