// Package gate is the admission state in front of a shard's reconcilers:
// the terms of the shard's hold of its Lease, the count of reconciles in
// flight, the fence of each, and the drain handover.
//
// Guarantees:
//   - Enter admits only while the current term is open (Open), its hold
//     is valid by the local monotonic clock, and Close has not been
//     called since; every admitted reconcile is counted until Leave.
//   - A term's context ends when the term ends (End, Close, or the next
//     Begin); a reconcile's writes are fenced by its term's holder, so a
//     later term never lifts the fence of a reconcile admitted earlier.
//   - Close(true) returns only once no reconcile is in flight or the
//     term's hold stopped being valid.
//   - The Reconciler never passes a draining object or the NotFound that
//     follows a handover to the reconciler it wraps; after a rejoin it
//     confirms each key's assignment with a live read once per term.
package gate
