package sharding

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/sharding/internal/membership"
	"github.com/kubeloop/kubeloop/sharding/internal/ranges"
	"github.com/kubeloop/kubeloop/sharding/internal/shardsel"
)

// ErrServerSideUnsupported is wrapped by Start's error in ServerSide mode
// when the API server does not filter a sharded kind by shardSelector: it
// ignores the field without the ShardedListAndWatch feature gate (every
// replica would cache and reconcile every object).
var ErrServerSideUnsupported = errors.New("sharding: the API server does not serve shardSelector")

// serverSide is a ring's state in ServerSide mode: the hash segments this
// shard admits, lists and publishes, and the handshake that moves them.
//
// A segment moves from shard A to shard B so: A's view of the ring no
// longer gives it to A; A stops admitting reconciles of its objects,
// waits for those in flight, lists without it (its cache drops the
// objects), and publishes its Lease without it. B's view gives it to B;
// B reads the ring's Leases, and once no live Lease but its own lists
// the segment it claims it (publishes it in its Lease), reads the Leases
// again, and starts on it (admits, lists) only if still no other live
// Lease lists it. Of two shards that claim a segment at once, at least
// one sees the other's claim in its second read (writes and reads of the
// API server are linearizable), so they never both start; the one with
// the greater name withdraws, the other waits for it.
type serverSide struct {
	r     *Ring
	field string // the shardSelector field path
	sel   *shardsel.Selector
	api   *annotatingAPI
	m     *serverSideMetrics
	// initErr is newServerSide's error, returned by detect (Start).
	initErr error

	mu       sync.Mutex
	admitted ranges.Set
	inflight [ranges.Segments]int
	idle     *sync.Cond
	dropped  map[string]struct{} // keys that left the cache with a segment, until their NotFound

	// Owned by run's goroutine.
	reader    client.Reader // the cache (nil: none), from Run
	listed    ranges.Set    // what the selector lists
	published ranges.Set    // what the Lease says (written)
	pending   ranges.Set    // claimed, waiting for another shard's Lease to let go
}

func newServerSide(r *Ring) *serverSide {
	// The ring's own metrics registered first (New), so a second ring on
	// the registry failed there; an error here is a name clash with
	// something else, reported by Start.
	m, err := newServerSideMetrics(r.opts.Metrics, r.opts.Ring)
	if err != nil {
		m, _ = newServerSideMetrics(nil, r.opts.Ring)
	}
	s := &serverSide{
		m:       m,
		initErr: err,
		r:       r,
		field:   r.opts.Key.field(),
		sel:     shardsel.New(ranges.Selector(r.opts.Key.field(), ranges.Set{})),
		api:     newAnnotatingAPI(membership.ClientAPI{C: r.spec.C}, ranges.Format(ranges.Set{})),
		dropped: map[string]struct{}{},
	}
	s.idle = sync.NewCond(&s.mu)
	return s
}

// detect checks, for every sharded kind, that the API server filters by
// shardSelector: a list with an invalid selector must be refused (with
// the gate off the field is dropped and the list succeeds).
func (s *serverSide) detect(ctx context.Context) error {
	if s.initErr != nil {
		return s.initErr
	}
	r := s.r
	var errs []error
	for _, k := range r.spec.Kinds {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		err := r.spec.C.List(ctx, l, &client.ListOptions{Limit: 1,
			Raw: &metav1.ListOptions{ShardSelector: "shardRange(" + s.field + ", '0x0', '0x1')"}})
		switch {
		case err != nil && strings.Contains(err.Error(), "invalid shard selector"):
			// Refused (kube-apiserver 1.37 answers 500 with this message):
			// the server parses shardSelector.
		case err == nil:
			errs = append(errs, fmt.Errorf("%w: ring %q: %s: a list with an invalid shardSelector succeeded, so the API server ignores the field; "+
				"enable the ShardedListAndWatch feature gate (kube-apiserver --feature-gates=ShardedListAndWatch=true, Kubernetes 1.37 or later) or use Mode Labels",
				ErrServerSideUnsupported, r.opts.Ring, k.GVK.Kind))
		default:
			errs = append(errs, fmt.Errorf("sharding: ring %q: probe shardSelector support of %s: %w", r.opts.Ring, k.GVK.Kind, err))
		}
	}
	return errors.Join(errs...)
}

// run moves this shard's segments towards its share of the live shards,
// every RetryPeriod, at once when the membership reader sees the set of
// live shards change, and every RetryPeriod/4 while a segment it should
// have waits for another shard's Lease to let go; until ctx (the term's
// background) ends. When it returns the shard admits nothing: a later
// term starts from no segment (while it was out, other shards may have
// taken its segments).
func (s *serverSide) run(ctx context.Context, reader client.Reader) {
	s.reader = reader
	defer s.admit(ranges.Set{})
	t := time.NewTicker(s.r.opts.RetryPeriod)
	defer t.Stop()
	soon := time.NewTimer(0)
	defer soon.Stop()
	<-soon.C
	for {
		waiting, err := s.step(ctx)
		if err != nil && ctx.Err() == nil {
			s.r.spec.Log.Error(err, "cannot move the shard's hash ranges; retrying")
		}
		if waiting {
			soon.Reset(s.r.opts.RetryPeriod / 4)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.r.kick: // the membership changed (watchMembers)
		case <-soon.C:
		}
		soon.Stop()
	}
}

// target returns this shard's share in the last view, and false while the
// view does not list this shard alive (just after an acquisition).
func (s *serverSide) target() (ranges.Set, bool) {
	v := s.r.members.View()
	if v == nil || !v.Alive[s.r.opts.Shard] {
		return ranges.Set{}, false
	}
	return ranges.Assign(v.Ring.Shards())[s.r.opts.Shard], true
}

// step is one round of the handshake (see serverSide). It reports
// whether a segment of this shard's share waits for another shard.
func (s *serverSide) step(ctx context.Context) (waiting bool, err error) {
	target, ok := s.target()
	if !ok {
		return false, nil
	}
	adm := s.admittedSet()
	// Give up what is no longer ours: stop admitting, wait for the
	// reconciles in flight, list without it, then publish.
	if lose := adm.Minus(target); !lose.Empty() {
		adm = adm.Minus(lose)
		s.admit(adm)
		if !s.waitIdle(ctx, lose) {
			return false, ctx.Err()
		}
		s.m.moves.WithLabelValues(s.r.opts.Ring, "out").Add(float64(lose.Len()))
		s.r.spec.Log.Info("giving up hash ranges", "segments", lose.String())
	}
	if err := s.list(ctx, adm); err != nil {
		return false, err
	}
	s.pending = s.pending.Intersect(target).Minus(adm)
	if err := s.publish(ctx, adm.Union(s.pending)); err != nil {
		return false, err
	}
	gain := target.Minus(adm)
	if gain.Empty() {
		return false, nil
	}
	blocked, _, err := s.others(ctx)
	if err != nil {
		return true, err
	}
	claim := gain.Minus(blocked).Union(s.pending)
	if claim.Empty() {
		return true, nil
	}
	if err := s.publish(ctx, adm.Union(claim)); err != nil {
		return true, err
	}
	blocked, lower, err := s.others(ctx)
	if err != nil {
		return true, err
	}
	start := claim.Minus(blocked)
	// Withdraw what a shard of a lower name claims too; keep waiting for
	// the rest.
	s.pending = claim.Intersect(blocked).Minus(lower)
	waiting = !gain.Minus(start).Empty()
	if start.Empty() {
		return waiting, s.publish(ctx, adm.Union(s.pending))
	}
	adm = adm.Union(start)
	s.admit(adm)
	s.m.moves.WithLabelValues(s.r.opts.Ring, "in").Add(float64(start.Len()))
	s.r.spec.Log.Info("taking hash ranges", "segments", start.String(), "held", adm.String())
	if err := s.list(ctx, adm); err != nil {
		return waiting, err
	}
	return waiting, s.publish(ctx, adm.Union(s.pending))
}

// others reads the ring's Leases and returns the segments that the live
// ones of other shards list, and of those the ones that a shard with a
// smaller name lists.
func (s *serverSide) others(ctx context.Context) (blocked, lower ranges.Set, err error) {
	r := s.r
	var leases coordinationv1.LeaseList
	if err := r.spec.C.List(ctx, &leases, client.InNamespace(r.opts.Namespace), client.MatchingLabels{RingLabel: r.opts.Ring}); err != nil {
		return blocked, lower, fmt.Errorf("sharding: ring %q: list shard leases in %s: %w", r.opts.Ring, r.opts.Namespace, err)
	}
	now := time.Now() // after the answer
	for i := range leases.Items {
		l := &leases.Items[i]
		shard := l.Labels[ShardNameLabel]
		if shard == "" || shard == r.opts.Shard || r.members.Observers().Expired(shard, l, now) {
			continue
		}
		text, ok := l.Annotations[RangesAnnotation]
		if !ok {
			continue // a shard in Labels mode, or one that never published
		}
		set, err := ranges.Parse(text)
		if err != nil {
			// Unreadable: take it as holding everything.
			r.spec.Log.Error(err, "unreadable ranges annotation; waiting for that shard", "lease", l.Name)
			set = ranges.All()
		}
		blocked = blocked.Union(set)
		if shard < r.opts.Shard {
			lower = lower.Union(set)
		}
	}
	return blocked, lower, nil
}

// publish makes the shard Lease list set, and returns once a write did:
// its own, or the next renewal's.
func (s *serverSide) publish(ctx context.Context, set ranges.Set) error {
	if set == s.published {
		return nil
	}
	gen := s.api.publish(ranges.Format(set))
	// At once; failing that, with the next renewal. The write is bounded
	// by RetryPeriod/2: a renewal waits behind it.
	wctx, cancel := context.WithTimeout(ctx, s.r.opts.RetryPeriod/2)
	now := s.api.writeNow(wctx)
	cancel()
	if !now && !s.api.written(ctx, gen) {
		return ctx.Err()
	}
	s.published = set
	return nil
}

// list makes the cache list set, and waits until every informer of the
// sharded kinds stored a list of it. The keys of the objects it drops are
// remembered, so that their NotFound is not taken for a deletion.
func (s *serverSide) list(ctx context.Context, set ranges.Set) error {
	if set == s.listed {
		return nil
	}
	if drop := s.listed.Minus(set); !drop.Empty() {
		s.rememberDropped(ctx, drop)
	}
	gen := s.sel.Set(ranges.Selector(s.field, set))
	// The gate, not the cache, keeps a segment's reconciles on one shard:
	// an informer that never lists again (removed from the cache) must
	// not stall every later move, so the wait is bounded.
	wctx, cancel := context.WithTimeout(ctx, 2*s.r.opts.LeaseDuration)
	defer cancel()
	if !s.sel.Stored(wctx, gen) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.r.spec.Log.Error(nil, "an informer of the sharded kinds has not listed the new hash ranges; going on", "after", (2 * s.r.opts.LeaseDuration).String())
	}
	s.listed = set
	return nil
}

// rememberDropped records the keys of the cached objects in drop.
func (s *serverSide) rememberDropped(ctx context.Context, drop ranges.Set) {
	r := s.r
	if s.reader == nil {
		return
	}
	for _, k := range r.spec.Kinds {
		if k.Controlled {
			continue
		}
		obj, err := r.spec.C.Scheme().New(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		if err != nil {
			continue
		}
		list, ok := obj.(client.ObjectList)
		if !ok || s.reader.List(ctx, list) != nil {
			continue
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			continue
		}
		s.mu.Lock()
		for _, item := range items {
			o, ok := item.(client.Object)
			if ok && drop.Has(s.segmentOf(o)) {
				s.dropped[k.GVK.Kind+"/"+client.ObjectKeyFromObject(o).String()] = struct{}{}
			}
		}
		s.mu.Unlock()
	}
}

// admit sets the segments the gate admits.
func (s *serverSide) admit(set ranges.Set) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admitted = set
	s.m.segments.WithLabelValues(s.r.opts.Ring, s.r.opts.Shard).Set(float64(set.Len()))
}
