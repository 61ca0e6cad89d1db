package membership

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/lease"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// Membership is this replica's membership in a ring: the holders of its
// shard Lease and its last view of the ring's shards.
type Membership struct {
	spec     *spec.Spec
	api      lease.API // the shard Lease's API (nil: the client's)
	obs      *Observers
	view     atomic.Pointer[View]
	onChange func() // called when the set of live shards changed
}

// New returns the membership of s's shard. Its shard Lease is written
// through api (nil: the live client); onChange is called (from Run) when
// the set of live shards changed.
func New(s *spec.Spec, api lease.API, onChange func()) *Membership {
	return &Membership{spec: s, api: api, obs: NewObservers(), onChange: onChange}
}

// NewShardHolder returns a new holder of this replica's shard Lease, with
// the process's holder identity: a rejoin with the same identity renews
// the Lease at once if it still names this process.
func (m *Membership) NewShardHolder() (*lease.Holder, error) {
	s := m.spec
	return NewHolder(s, m.api, spec.LeaseName(s.Ring, s.Shard),
		map[string]string{spec.RingLabel: s.Ring, spec.ShardNameLabel: s.Shard})
}

// Observers returns this replica's observations of the shard Leases.
func (m *Membership) Observers() *Observers { return m.obs }

// View returns the last view; nil before the first read.
func (m *Membership) View() *View { return m.view.Load() }

// ReadView reads a fresh view (it does not replace the last one).
func (m *Membership) ReadView(ctx context.Context) (*View, error) {
	return ReadView(ctx, m.spec, m.obs)
}

// Run reads the ring's Leases into the view until ctx ends, and calls
// the change hook when the set of live shards changed. It reads every
// RetryPeriod, and sooner: when the hold of a live shard ends by this
// replica's observation (a timer set for that moment), and, when the
// client can watch, as soon as a Lease event may change the view (a new
// shard, a released or deleted Lease); the watch also keeps the
// observations of renewals fresh.
func (m *Membership) Run(ctx context.Context) {
	s := m.spec
	changed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	if w, ok := Watcher(s); ok {
		wg.Go(func() {
			WatchLeases(ctx, s, w, func(l *coordinationv1.Lease, deleted bool, at time.Time) {
				shard := l.Labels[spec.ShardNameLabel]
				if shard == "" {
					return
				}
				v := m.view.Load()
				alive := v != nil && v.Alive[shard]
				if !deleted {
					m.obs.Observe(shard, l, at)
				}
				// A renewal of a live shard only moves its expiry later.
				if !alive || deleted || lease.RecordOf(l.Spec).Holder == "" {
					spec.Signal(changed)
				}
			}, client.MatchingLabels{spec.RingLabel: s.Ring})
		})
	}
	timer := time.NewTimer(s.RetryPeriod)
	defer timer.Stop()
	for {
		next := s.RetryPeriod
		v, err := m.ReadView(ctx)
		if err == nil {
			old := m.view.Swap(v)
			s.Metrics.Shards.WithLabelValues(s.Ring).Set(float64(v.Ring.Len()))
			if old == nil || !slices.Equal(old.Ring.Shards(), v.Ring.Shards()) {
				s.Log.Info("ring membership", "shards", v.Ring.Shards())
				m.onChange()
			}
			if at := m.obs.NextExpiry(v.Alive); !at.IsZero() {
				if until := time.Until(at); until < next {
					next = max(until, 0) + time.Millisecond
				}
			}
		} else if ctx.Err() == nil {
			s.Log.Error(err, "cannot read the ring's leases")
		}
		timer.Reset(next)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-changed:
			timer.Stop() // Go 1.23 timers: no stale tick after Stop
		}
	}
}
