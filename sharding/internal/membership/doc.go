// Package membership is a replica's membership in a ring: the holders of
// its own shard Lease (one per term) and its view of the other shards,
// judged from its own observations of their Leases.
//
// Guarantees:
//   - A shard counts as gone only once its Lease has not changed for its
//     leaseDurationSeconds by this replica's monotonic clock, counted from
//     when this replica saw it change (the lease core's Observer), or was
//     released; clock offsets between replicas do not matter.
//   - When the client can watch, Run sees a renewal when it is stored and
//     judges a shard gone the moment its hold ends (a timer, not the next
//     read); without a watch it reads the Leases every RetryPeriod.
//   - Run calls the change hook whenever the set of live shards changed.
//   - A View is a consistent read of the ring's Leases at one moment; its
//     methods are safe for concurrent use.
package membership
