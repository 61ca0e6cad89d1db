package sharding

import "github.com/kubeloop/kubeloop/internal/lease"

// newShardHolder returns a new holder of this replica's shard Lease, with
// the process's holder identity: a rejoin with the same identity renews
// the Lease at once if it still names this process.
func (r *Ring) newShardHolder() (*lease.Holder, error) {
	if r.ss != nil {
		return r.ss.newHolder() // its writes carry the ranges annotation
	}
	return newHolder(r.c, r.opts, leaseName(r.opts.Ring, r.opts.Shard), r.holder,
		map[string]string{RingLabel: r.opts.Ring, ShardNameLabel: r.opts.Shard})
}
