// Package ranges divides the 64-bit FNV-1a hash space of the API server's
// shardSelector (Kubernetes 1.37, ShardedListAndWatch) among the shards of
// a ring, and encodes what a shard holds for its Lease.
//
// The space [0, 2^64) is cut into Segments equal segments; segment k is
// [ceil(k*2^64/Segments), ceil((k+1)*2^64/Segments)). A Set is a set of
// segments, 128 bits. Assign gives every segment to one shard of a
// membership with Maglev's table population (Eisenbud et al., NSDI 2016).
//
// Guarantees:
//   - Assign is a pure function of the set of shard names (their order
//     and duplicates do not matter): every replica that sees the same
//     members computes the same assignment.
//   - Every segment has exactly one owner; each shard owns
//     floor(Segments/n) or ceil(Segments/n) segments (balanced to one
//     segment, under 1% of the space).
//   - Few segments move when one shard joins or leaves (near the ideal
//     1/n; TestAssignMoves bounds it).
//   - Of(hash) is the segment the API server's half-open ranges put hash
//     in: Selector(field, s) matches an object exactly when s holds
//     Of(hash of the field's value).
//   - The codec's text has a fixed size (it does not grow with objects or
//     shards) and Parse(Format(s)) == s; Parse refuses anything else.
package ranges
