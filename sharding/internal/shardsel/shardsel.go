// Package shardsel is the changing shardSelector that sharding's
// ServerSide mode gives the cache of its sharded kinds.
//
// Guarantees:
//   - Shard returns the current selector and generation, and a channel
//     closed by the next Set.
//   - Stored(gen) returns once every informer that ever announced a list
//     (Listing) has reported a stored list (Listed) of gen or later, or
//     when its context ends.
package shardsel

import (
	"context"
	"sync"

	"github.com/kubeloop/kubeloop/cache"
)

// Selector is a changing shardSelector for a cache's informers
// (cache.ByObject.ShardSelector). It remembers the generation each
// informer stored last, so that a caller can wait until the cache no
// longer holds the objects outside a new selector. Its methods are safe
// for concurrent use.
type Selector struct {
	mu      sync.Mutex
	sel     string
	gen     uint64
	changed chan struct{}
	listing map[any]uint64 // by list-watch: the generation of its last list
	listed  map[any]uint64 // by list-watch: the generation it stored last
	signal  chan struct{}  // closed and replaced on every Listed
}

var _ cache.ShardSelector = (*Selector)(nil)

// New returns a Selector of sel at generation 1.
func New(sel string) *Selector {
	return &Selector{sel: sel, gen: 1, changed: make(chan struct{}), listing: map[any]uint64{},
		listed: map[any]uint64{}, signal: make(chan struct{})}
}

// Shard implements cache.ShardSelector.
func (s *Selector) Shard() (string, uint64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sel, s.gen, s.changed
}

// Listing implements cache.ShardSelector.
func (s *Selector) Listing(lw any, gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listing[lw] = gen
}

// Listed implements cache.ShardSelector.
func (s *Selector) Listed(lw any, gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen > s.listed[lw] {
		s.listed[lw] = gen
		close(s.signal)
		s.signal = make(chan struct{})
	}
}

// Set replaces the selector; the informers list again. It returns the new
// generation, for Stored.
func (s *Selector) Set(sel string) uint64 {
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

// Stored waits until every informer that has listed stored a list of
// generation gen or later, or ctx ends (false).
func (s *Selector) Stored(ctx context.Context, gen uint64) bool {
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
