package sharding

import (
	"context"
)

// SweepResult counts what one sweep saw and did.
type SweepResult struct {
	// Objects is the number of sharded objects listed.
	Objects int
	// Assigned were unassigned and got a shard.
	Assigned int
	// Reassigned belonged to a shard that is gone and got a live one.
	Reassigned int
	// Drains is the number of drains requested.
	Drains int
	// Pending are waiting for a drain to be acknowledged, or children for
	// their owner to move.
	Pending int
	// Conflicts are objects that changed between the list and the patch;
	// the next sweep looks at them again.
	Conflicts int
	// PerShard counts the objects assigned to each shard after the sweep.
	PerShard map[string]int
}

// Sweep lists every sharded object once, metadata only, page by page
// (SweepPageSize; a consistent list, which API servers from v1.31 serve
// from their watch cache), and moves each
// towards its shard on the ring of live shards: it assigns unassigned
// objects, reassigns the objects of shards that are gone, requests a drain
// of objects whose shard is alive but no longer theirs, and moves children
// whose owner already sits on their shard. Every patch carries the
// resourceVersion it was decided on, so a concurrent change makes it a
// conflict, not a wrong move. The sharder calls it; it is exported for
// tests and tools. It keeps one page in memory at a time.
func (r *Ring) Sweep(ctx context.Context) (SweepResult, error) {
	res, err := r.sharder.Sweep(ctx)
	return SweepResult{Objects: res.Objects, Assigned: res.Assigned, Reassigned: res.Reassigned, Drains: res.Drains,
		Pending: res.Pending, Conflicts: res.Conflicts, PerShard: res.PerShard}, err
}
