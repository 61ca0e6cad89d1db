package sharding

import (
	"context"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/lease"
)

// The ring holds its Leases (its shard Lease, and the sharder's election
// Lease while it campaigns) with the lease core, internal/lease, which
// leaderelection uses too, and judges the other shards' Leases with the
// core's Observer: by this replica's own clock, from when it saw each
// Lease change.

// clientAPI is the lease core's Lease API over the ring's live client.
type clientAPI struct{ c client.Client }

var _ lease.API = clientAPI{}

func (a clientAPI) Get(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	if err := a.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, l); err != nil {
		return nil, err
	}
	return l, nil
}

func (a clientAPI) Create(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if err := a.c.Create(ctx, l); err != nil {
		return nil, err
	}
	return l, nil
}

func (a clientAPI) Update(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if err := a.c.Update(ctx, l); err != nil {
		return nil, err
	}
	return l, nil
}

// newHolder returns a holder of the Lease name in o.Namespace for
// identity, with o's timings (already validated).
func newHolder(c client.Client, o Options, name, identity string, labels map[string]string) (*lease.Holder, error) {
	return lease.NewHolder(lease.Config{
		API:           clientAPI{c: c},
		Namespace:     o.Namespace,
		Name:          name,
		Identity:      identity,
		Labels:        labels,
		LeaseDuration: o.LeaseDuration,
		RenewDeadline: o.RenewDeadline,
		RetryPeriod:   o.RetryPeriod,
	})
}

// members remembers this replica's observation of every shard Lease of
// the ring, so that a shard counts as gone only once its Lease has not
// changed for its leaseDurationSeconds by this replica's clock, or was
// released. Its methods are safe for concurrent use (the membership
// reader, the sharder and the webhook's sweeps share it).
type members struct {
	mu  sync.Mutex
	obs map[string]*lease.Observer // by shard name
}

func newMembers() *members { return &members{obs: map[string]*lease.Observer{}} }

// expired records l, read just before now, as shard's Lease and reports
// whether its hold has ended by this replica's observation.
func (m *members) expired(shard string, l *coordinationv1.Lease, now time.Time) bool {
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

// observe records l, which arrived at now (a watch event), as shard's
// Lease; it reports whether the record changed (the clock of its hold
// restarted). A record that arrives late, after a read already showed a
// newer one, restarts the clock too, and the newer one restarts it again
// when its own event arrives: a late event only makes the hold end later
// by this replica's judgment, never earlier.
func (m *members) observe(shard string, l *coordinationv1.Lease, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.obs[shard]
	if o == nil {
		o = &lease.Observer{}
		m.obs[shard] = o
	}
	return o.Observe(lease.RecordOf(l.Spec), now)
}

// nextExpiry returns the earliest time, by this replica's clock, at which
// the hold of one of the shards in alive ends (zero: none is known).
func (m *members) nextExpiry(alive map[string]bool) time.Time {
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

// keepOnly forgets the shards whose Lease was not listed (deleted).
func (m *members) keepOnly(listed map[string]bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for shard := range m.obs {
		if !listed[shard] {
			delete(m.obs, shard)
		}
	}
}
