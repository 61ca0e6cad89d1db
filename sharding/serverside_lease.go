package sharding

import (
	"context"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/internal/lease"
)

// RangesAnnotation is set, in server-side mode, on each shard Lease to
// the hash segments the shard holds: those it reconciles and those it
// claims (internal/ranges' codec, 39 bytes whatever the object count).
// Another shard starts on a segment only once no live Lease lists it.
const RangesAnnotation = "sharding.kubeloop.dev/ranges"

// annotatingAPI is the shard Lease's API in server-side mode: every write
// of the lease core (acquisition, renewal, release) carries the ranges
// annotation as last published, so publishing costs no write of its own
// and never conflicts with a renewal; it lands at the next renewal
// (within RetryPeriod).
type annotatingAPI struct {
	clientAPI
	mu      sync.Mutex
	want    string // the annotation to write
	wantGen uint64
	wrote   uint64 // the wantGen of the last successful write
	signal  chan struct{}
}

var _ lease.API = (*annotatingAPI)(nil)

func newAnnotatingAPI(c clientAPI, initial string) *annotatingAPI {
	return &annotatingAPI{clientAPI: c, want: initial, signal: make(chan struct{})}
}

// publish sets the annotation of the next writes and returns its
// generation, for written.
func (a *annotatingAPI) publish(value string) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if value != a.want {
		a.want = value
		a.wantGen++
	}
	return a.wantGen
}

// written waits until a write with generation gen (or a later one)
// succeeded, or ctx ends (false).
func (a *annotatingAPI) written(ctx context.Context, gen uint64) bool {
	for {
		a.mu.Lock()
		done, ch := a.wrote >= gen, a.signal
		a.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-ch:
		}
	}
}

func (a *annotatingAPI) stamp(l *coordinationv1.Lease) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[RangesAnnotation] = a.want
	return a.wantGen
}

func (a *annotatingAPI) done(gen uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if gen > a.wrote {
		a.wrote = gen
		close(a.signal)
		a.signal = make(chan struct{})
	}
}

func (a *annotatingAPI) Create(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	gen := a.stamp(l)
	out, err := a.clientAPI.Create(ctx, l)
	if err == nil {
		a.done(gen)
	}
	return out, err
}

func (a *annotatingAPI) Update(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	gen := a.stamp(l)
	out, err := a.clientAPI.Update(ctx, l)
	if err == nil {
		a.done(gen)
	}
	return out, err
}

// shardSelector is the server-side shardSelector of every sharded kind of
// the ring (cache.ByObject.ShardSelector): the ranges this shard lists.
// It remembers which generation each informer stored last, so that a
// drop of ranges can wait until the cache no longer holds their objects.
type shardSelector struct {
	mu      sync.Mutex
	sel     string
	gen     uint64
	changed chan struct{}
	listing map[any]uint64 // by list-watch: the generation of its last list
	listed  map[any]uint64 // by list-watch: the generation it stored last
	signal  chan struct{}  // closed and replaced on every Listed
}

var _ cache.ShardSelector = (*shardSelector)(nil)

func newShardSelector(sel string) *shardSelector {
	return &shardSelector{sel: sel, gen: 1, changed: make(chan struct{}), listing: map[any]uint64{},
		listed: map[any]uint64{}, signal: make(chan struct{})}
}

// Shard implements cache.ShardSelector.
func (s *shardSelector) Shard() (string, uint64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sel, s.gen, s.changed
}

// Listing implements cache.ShardSelector.
func (s *shardSelector) Listing(lw any, gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listing[lw] = gen
}

// Listed implements cache.ShardSelector.
func (s *shardSelector) Listed(lw any, gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen > s.listed[lw] {
		s.listed[lw] = gen
		close(s.signal)
		s.signal = make(chan struct{})
	}
}

// set replaces the selector; the informers list again. It returns the new
// generation, for stored.
func (s *shardSelector) set(sel string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sel == s.sel {
		return s.gen
	}
	s.sel = sel
	s.gen++
	close(s.changed)
	s.changed = make(chan struct{})
	return s.gen
}

// stored waits until every informer that has listed stored a list of
// generation gen or later, or ctx ends (false).
func (s *shardSelector) stored(ctx context.Context, gen uint64) bool {
	for {
		s.mu.Lock()
		done := true
		for lw := range s.listing {
			if s.listed[lw] < gen {
				done = false
				break
			}
		}
		ch := s.signal
		s.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-ch:
		}
	}
}
