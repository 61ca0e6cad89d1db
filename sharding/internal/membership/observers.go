package membership

import (
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/kubeloop/kubeloop/internal/lease"
)

// Observers remember this replica's observation of every shard Lease of
// the ring, so that a shard counts as gone only once its Lease has not
// changed for its leaseDurationSeconds by this replica's clock, or was
// released. Its methods are safe for concurrent use (the membership
// reader, the sharder and the webhook's sweeps share it).
type Observers struct {
	mu  sync.Mutex
	obs map[string]*lease.Observer // by shard name
}

// NewObservers returns an empty set of observations.
func NewObservers() *Observers { return &Observers{obs: map[string]*lease.Observer{}} }

// Expired records l, read just before now, as shard's Lease and reports
// whether its hold has ended by this replica's observation.
func (m *Observers) Expired(shard string, l *coordinationv1.Lease, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.obs[shard]
	if o == nil {
		o = &lease.Observer{}
		m.obs[shard] = o
	}
	o.Observe(lease.RecordOf(l.Spec), now)
	return o.Expired(now)
}

// Observe records l, which arrived at now (a watch event), as shard's
// Lease; it reports whether the record changed (the clock of its hold
// restarted). A record that arrives late, after a read already showed a
// newer one, restarts the clock too, and the newer one restarts it again
// when its own event arrives: a late event only makes the hold end later
// by this replica's judgment, never earlier.
func (m *Observers) Observe(shard string, l *coordinationv1.Lease, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.obs[shard]
	if o == nil {
		o = &lease.Observer{}
		m.obs[shard] = o
	}
	return o.Observe(lease.RecordOf(l.Spec), now)
}

// NextExpiry returns the earliest time, by this replica's clock, at which
// the hold of one of the shards in alive ends (zero: none is known).
func (m *Observers) NextExpiry(alive map[string]bool) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	var next time.Time
	for shard := range alive {
		o := m.obs[shard]
		if o == nil {
			continue
		}
		if at := o.ExpiresAt(); !at.IsZero() && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	return next
}

// KeepOnly forgets the shards whose Lease was not listed (deleted).
func (m *Observers) KeepOnly(listed map[string]bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for shard := range m.obs {
		if !listed[shard] {
			delete(m.obs, shard)
		}
	}
}
