package multicluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/log"
	"github.com/kubeloop/kubeloop/sharding"
)

// ShardedOptions configures a Sharded placement. The zero value is valid.
type ShardedOptions struct {
	// Logger receives the placement's logs, with the key "shard". Zero: a
	// logger writing through log/slog's default handler.
	Logger logr.Logger
	// Metrics registers kubeloop_multicluster_sharded_* (held and placed
	// clusters, drains). Nil: none.
	Metrics prometheus.Registerer
}

// Sharded places the clusters a Provider discovers on the shards of a
// sharding ring, so that each cluster is engaged (its cache, informers and
// the controllers' sources) and reconciled on one replica only. It is the
// Provider of the replica's Fleet: every replica runs the inner Provider
// and knows every cluster (names and connection details only), and
// engages in its fleet the clusters placed on its own shard. Give the
// controllers' reconcilers to Reconciler, so that their reconciles are
// admitted only for the clusters this replica holds, under the shard's
// hold, and fenced by it. The manager does all of this when both
// Options.Sharding and Options.Clusters are set.
//
// The protocol (see decide): every RetryPeriod/2 (RetryPeriod/4 while a
// cluster placed on it waits to be engaged, and when the Provider's
// clusters change) the replica lists the ring's shard Leases (one list of
// as many Leases as replicas: reads grow with replicas, not clusters),
// places the known clusters on the live shards (Place: bounded-load
// rendezvous hashing, a pure function of the two sets), drains each
// cluster it holds
// that is now another shard's (its Requests are no longer admitted, the
// contexts of its reconciles in flight end and are waited for, its
// engagement ends and is waited for), then publishes the hash of the view
// it now operates under in its own Lease (sharding.Ring.PublishView: one
// short annotation carried by the next renewal, so Lease writes do not
// grow with the clusters). It engages a cluster placed on it once its own
// Lease shows that value and no other live shard's Lease shows a view
// that gives that shard the cluster: the previous owner has drained. A
// shard that is gone by the lease rules (its Lease released, or expired by
// this replica's clock) is no longer a member, and its hold ended before
// that (its reconciles are fenced), so its clusters move at once. A
// replica whose ring does not admit work (its Lease lost, a rejoin's
// quarantine, stopping) holds nothing.
type Sharded struct {
	p       Provider
	ring    *sharding.Ring
	log     logr.Logger
	wake    chan struct{}
	metrics shardedMetrics

	mu        sync.Mutex
	fleet     *Fleet
	known     map[string]*found // the clusters the Provider engaged, by name
	held      map[string]*hold  // the clusters this replica holds
	placement map[string]string // the last one computed
	views     []view            // placements of recent views, newest last
	desired   string            // the value published, or to be
	gen       uint64
}

// found is one engagement of a cluster by the inner Provider.
type found struct {
	ctx context.Context // the Provider's; ends when the cluster leaves
	cfg *rest.Config
}

// hold is a cluster held by this replica in one term of its shard Lease.
type hold struct {
	name     string
	term     int
	src      *found
	ctx      context.Context // ends when the cluster is drained
	cancel   context.CancelFunc
	draining bool            // set under Sharded.mu; no reconcile is admitted after
	inflight sync.WaitGroup  // the admitted reconciles; Add under Sharded.mu
	done     <-chan struct{} // the fleet engagement's end; nil for the manager's own cluster
}

// view is a placement this replica computed, by its hash.
type view struct {
	hash      string
	placement map[string]string
}

// keptViews is how many recent placements a replica keeps to resolve the
// views other shards publish.
const keptViews = 16

var _ Provider = (*Sharded)(nil)

// NewSharded returns the placement of p's clusters on ring's shards.
func NewSharded(p Provider, ring *sharding.Ring, opts ShardedOptions) (*Sharded, error) {
	if p == nil || ring == nil {
		return nil, errors.New("multicluster: NewSharded needs a Provider and a sharding.Ring")
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = log.Default()
	}
	s := &Sharded{p: p, ring: ring, log: opts.Logger.WithName("multicluster").WithValues("shard", ring.Shard()),
		wake: make(chan struct{}, 1), known: map[string]*found{}, held: map[string]*hold{}}
	if opts.Metrics != nil {
		if err := opts.Metrics.Register(&shardedCollector{s: s}); err != nil {
			return nil, fmt.Errorf("multicluster: register the sharded fleet's metrics: %w", err)
		}
	}
	return s, nil
}

// Run runs the inner Provider and the placement until ctx ends, then
// drains every cluster it holds; s must be the Fleet (a Fleet runs its
// Provider so). It returns the inner Provider's error, if any.
func (s *Sharded) Run(ctx context.Context, sink Sink) error {
	f, ok := sink.(*Fleet)
	if !ok {
		return fmt.Errorf("multicluster: ring %q: Sharded runs as a Fleet's Provider, not with a %T", s.ring.Name(), sink)
	}
	s.mu.Lock()
	s.fleet = f
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	perr := make(chan error, 1)
	go func() {
		err := s.p.Run(ctx, SinkFunc(s.found))
		if err != nil {
			cancel()
		}
		perr <- err
	}()
	s.loop(ctx)
	s.drain(s.heldNames())
	return <-perr
}

// found records a cluster the inner Provider engaged, until ctx ends.
func (s *Sharded) found(ctx context.Context, name string, cfg *rest.Config) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if cfg == nil {
		return fmt.Errorf("multicluster: cluster %q: nil rest.Config", name)
	}
	fd := &found{ctx: ctx, cfg: rest.CopyConfig(cfg)}
	s.mu.Lock()
	s.known[name] = fd
	s.mu.Unlock()
	context.AfterFunc(ctx, func() {
		s.mu.Lock()
		if s.known[name] == fd {
			delete(s.known, name)
		}
		s.mu.Unlock()
		s.poke()
	})
	s.poke()
	return nil
}

func (s *Sharded) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// loop steps every RetryPeriod/2, every RetryPeriod/4 while an engagement
// waits for the other shards, and when the Provider's clusters change,
// until ctx ends.
func (s *Sharded) loop(ctx context.Context) {
	rp := s.ring.RetryPeriod()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
			t.Stop()
		}
		next := rp / 2
		if s.step(ctx) {
			next = rp / 4
		}
		t.Reset(next)
	}
}

// step is one round of the protocol; it reports whether a cluster placed
// on this shard waits to be engaged.
func (s *Sharded) step(ctx context.Context) bool {
	members, err := s.ring.Members(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error(err, "cannot read the ring's leases; holding on")
		}
		return false
	}
	term, admitting := s.ring.Term()
	shards := make([]string, len(members))
	for i, m := range members {
		shards[i] = m.Shard
	}
	s.mu.Lock()
	known := make([]string, 0, len(s.known)+1)
	known = append(known, "") // the manager's own cluster: its Requests too go to one replica
	for n := range s.known {
		known = append(known, n)
	}
	hash := viewHash(shards, known)
	p := s.resolveLocked(hash)
	if p == nil {
		p = place(known, shards)
		s.views = append(s.views, view{hash: hash, placement: p})
		if len(s.views) > keptViews {
			s.views = slices.Delete(s.views, 0, len(s.views)-keptViews)
		}
	}
	if hashOf(s.desired) != hash {
		s.gen++
		s.desired = published(hash, s.gen)
	}
	s.placement = p
	held := make(map[string]int, len(s.held))
	for n, h := range s.held {
		held[n] = h.term
	}
	in := stepInput{self: s.ring.Shard(), term: term, admitting: admitting, members: members, known: known,
		held: held, placement: p, desired: s.desired,
		resolve: func(h string) (map[string]string, bool) { pl := s.resolveLocked(h); return pl, pl != nil }}
	d := decide(in)
	desired := s.desired
	s.mu.Unlock()

	s.drain(d.drop)
	s.ring.PublishView(desired)
	for _, c := range d.engage {
		s.engage(c, term)
	}
	s.refresh()
	mine := 0
	for _, c := range known {
		if p[c] == in.self {
			mine++
		}
	}
	return len(s.heldNames()) < mine
}

// resolveLocked returns the placement of a recent view, or nil. The
// caller holds s.mu.
func (s *Sharded) resolveLocked(hash string) map[string]string {
	for i := len(s.views) - 1; i >= 0; i-- {
		if s.views[i].hash == hash {
			return s.views[i].placement
		}
	}
	return nil
}

// engage holds cluster name in term and, unless it is the manager's own,
// engages it in the fleet.
func (s *Sharded) engage(name string, term int) {
	s.mu.Lock()
	fd := s.known[name]
	if name != "" && fd == nil { // it left meanwhile
		s.mu.Unlock()
		return
	}
	parent := context.Background()
	if fd != nil {
		parent = fd.ctx
	}
	h := &hold{name: name, term: term, src: fd}
	h.ctx, h.cancel = context.WithCancel(parent)
	s.held[name] = h
	f := s.fleet
	s.mu.Unlock()
	if name == "" {
		s.log.Info("holding the manager's own cluster", "term", term)
		return
	}
	done, err := f.engageTracked(h.ctx, name, fd.cfg)
	if err != nil {
		s.log.Error(err, "cannot engage a cluster placed on this shard", "cluster", name)
		s.mu.Lock()
		if s.held[name] == h {
			delete(s.held, name)
		}
		s.mu.Unlock()
		h.cancel()
		return
	}
	s.mu.Lock()
	h.done = done
	s.mu.Unlock()
	s.log.Info("holding a cluster", "cluster", name, "term", term)
}

// refresh engages again, in the fleet, each held cluster whose Provider
// engaged it again with new connection details (the old engagement's
// context ended): the cluster stays on this shard.
func (s *Sharded) refresh() {
	s.mu.Lock()
	var stale []*hold
	for n, h := range s.held {
		if n != "" && s.known[n] != nil && s.known[n] != h.src {
			stale = append(stale, h)
		}
	}
	s.mu.Unlock()
	for _, h := range stale {
		s.drain([]string{h.name})
		s.engage(h.name, h.term)
	}
}

// drain ends the holds of names, all at once: no reconcile of theirs is
// admitted any more, the contexts of those in flight end, and drain
// returns once those have returned and the clusters' fleet engagements
// have ended (their sources, caches and goroutines stopped).
func (s *Sharded) drain(names []string) {
	var wg sync.WaitGroup
	for _, n := range names {
		s.mu.Lock()
		h := s.held[n]
		if h == nil {
			s.mu.Unlock()
			continue
		}
		h.draining = true
		delete(s.held, n)
		if n != "" {
			s.metrics.drains.Add(1)
		}
		done := h.done
		s.mu.Unlock()
		h.cancel()
		wg.Go(func() {
			h.inflight.Wait()
			if done != nil {
				<-done
			}
			s.log.Info("drained a cluster", "cluster", n, "term", h.term)
		})
	}
	wg.Wait()
}

// heldNames returns the clusters held, "" included, sorted.
func (s *Sharded) heldNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.held))
	for n := range s.held {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Held returns the fleet's clusters this replica holds now, sorted: those
// it engages and reconciles. The manager's own cluster is not among them
// (see HoldsLocal).
func (s *Sharded) Held() []string {
	return slices.DeleteFunc(s.heldNames(), func(n string) bool { return n == "" })
}

// HoldsLocal reports whether this replica holds the manager's own cluster
// (""), whose Requests, in a controller behind Reconciler, only the
// replica that holds it reconciles.
func (s *Sharded) HoldsLocal() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[""] != nil
}

// engageTracked engages name in the fleet and returns a channel closed
// when that engagement has ended.
func (f *Fleet) engageTracked(ctx context.Context, name string, cfg *rest.Config) (<-chan struct{}, error) {
	if err := f.Engage(ctx, name, cfg); err != nil {
		return nil, err
	}
	f.mu.Lock()
	e := f.clusters[name]
	f.mu.Unlock()
	if e == nil { // it ended already
		c := make(chan struct{})
		close(c)
		return c, nil
	}
	return e.done, nil
}
