package sharding

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/internal/lease"
)

// kind is one sharded kind.
type kind struct {
	gvk        schema.GroupVersionKind
	proto      client.Object
	controlled bool // a child kind: moved without a drain
}

// Ring is this replica's membership in one ring: its shard Lease, its view
// of the other shards, the assignment webhook, the gate in front of its
// reconcilers, and, on the replica elected among the ring, the sharder.
// Create it with New, set the cache reader, and run Start once (a manager
// runnable that needs no leadership).
type Ring struct {
	opts     Options
	c        client.Client // live: Leases, label patches, sweeps
	kinds    []kind
	log      logr.Logger
	metrics  *metrics
	holder   string // this process's holder identity
	shardKey string // ShardLabel(ring)
	drainKey string // DrainLabel(ring)

	first   *lease.Holder // the shard Lease's holder of the first term (later terms get their own)
	members *members      // this replica's observations of the shard Leases
	view    atomic.Pointer[view]
	reader  atomic.Pointer[readerBox] // the cache, for the reconcilers' gate
	started atomic.Bool

	// The gate in front of the reconcilers.
	mu          sync.Mutex
	cur         *term         // the current (or last) hold of the shard Lease; nil before the first
	accepting   bool          // cur admits reconciles
	admitting   chan struct{} // closed once the shard first admits reconciles
	admittedYet bool
	inflight    int
	idle        *sync.Cond
	handedOver  map[string]struct{} // keys acknowledged, until their NotFound

	kick  chan struct{}                   // asks the sharder for a sweep now
	swept atomic.Pointer[map[string]bool] // the live shards of the last complete sweep

	ss *serverSide // ServerSide mode's state; nil in Labels mode (serverside.go)
}

type readerBox struct{ r client.Reader }

// New checks opts and returns this replica's Ring. c must read from and
// write to the API server directly (not a cache): it holds the Leases,
// patches labels and lists for the sweep; its scheme must know every
// sharded kind. New makes no request.
func New(c client.Client, opts Options) (*Ring, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: the client is nil", ErrInvalidOptions)
	}
	o, err := opts.defaulted()
	if err != nil {
		return nil, err
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	r := &Ring{
		opts:       o,
		c:          c,
		holder:     o.Shard + "_" + string(uuid.NewUUID()),
		shardKey:   ShardLabel(o.Ring),
		drainKey:   DrainLabel(o.Ring),
		handedOver: map[string]struct{}{},
		kick:       make(chan struct{}, 1),
		admitting:  make(chan struct{}),
		log:        o.Logger.WithValues("ring", o.Ring, "shard", o.Shard),
	}
	r.idle = sync.NewCond(&r.mu)
	var errs []error
	seen := map[schema.GroupKind]bool{}
	add := func(obj client.Object, controlled bool) {
		gvk, err := apiutil.GVKForObject(obj, c.Scheme())
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: ring %q: sharded kind %T: %w", ErrNotInScheme, o.Ring, obj, err))
			return
		}
		if seen[gvk.GroupKind()] {
			errs = append(errs, fmt.Errorf("%w: ring %q: kind %s listed twice", ErrInvalidOptions, o.Ring, gvk.Kind))
			return
		}
		seen[gvk.GroupKind()] = true
		r.kinds = append(r.kinds, kind{gvk: gvk, proto: obj, controlled: controlled})
	}
	for _, obj := range o.Objects {
		add(obj, false)
	}
	for _, obj := range o.Controlled {
		add(obj, true)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if r.metrics, err = newMetrics(o.Metrics, o.Ring); err != nil {
		return nil, err
	}
	if o.Mode == ServerSide {
		r.ss = newServerSide(r)
	}
	r.first, err = r.newShardHolder()
	if err != nil {
		return nil, fmt.Errorf("sharding: ring %q: %w", o.Ring, err)
	}
	r.members = newMembers()
	return r, nil
}

// Name returns the ring's name.
func (r *Ring) Name() string { return r.opts.Ring }

// Shard returns this replica's shard name.
func (r *Ring) Shard() string { return r.opts.Shard }

// ShardLabel returns the label key that names an object's shard in this
// ring.
func (r *Ring) ShardLabel() string { return r.shardKey }

// DrainLabel returns the label key that marks an object of this ring
// draining.
func (r *Ring) DrainLabel() string { return r.drainKey }

// Shards returns the shards alive in this replica's last view of the
// ring, sorted; nil before the first read.
func (r *Ring) Shards() []string {
	if v := r.view.Load(); v != nil {
		return v.ring.Shards()
	}
	return nil
}

// SetCacheReader sets the reader the reconcilers' gate reads objects
// from: the cache whose sharded kinds ConfigureCache filtered (the
// manager's client). Until it is set the gate reads through the live
// client.
func (r *Ring) SetCacheReader(reader client.Reader) {
	r.reader.Store(&readerBox{r: reader})
}

// ConfigureCache makes co cache, of every sharded kind, only the objects
// assigned to this shard: it adds the requirement ShardLabel()=Shard() to
// the kind's label selector (ByObject's, or DefaultLabelSelector's). It
// copies co.ByObject before changing it. It fails with ErrOtherRing when a
// kind is already filtered by another ring's shard label, and with
// ErrNotInScheme when a ByObject key is not in the client's scheme.
func (r *Ring) ConfigureCache(co *cache.Options) error {
	if r.ss != nil {
		return r.ss.configureCache(co)
	}
	byObject := make(map[client.Object]cache.ByObject, len(co.ByObject)+len(r.kinds))
	maps.Copy(byObject, co.ByObject)
	keyOf := map[schema.GroupVersionKind]client.Object{}
	for obj := range byObject {
		gvk, err := apiutil.GVKForObject(obj, r.c.Scheme())
		if err != nil {
			return fmt.Errorf("%w: cache ByObject key %T: %w", ErrNotInScheme, obj, err)
		}
		keyOf[gvk] = obj
	}
	req, err := labels.NewRequirement(r.shardKey, selection.Equals, []string{r.opts.Shard})
	if err != nil {
		return fmt.Errorf("sharding: ring %q: selector: %w", r.opts.Ring, err)
	}
	for _, k := range r.kinds {
		key, ok := keyOf[k.gvk]
		if !ok {
			key = k.proto
		}
		bo := byObject[key]
		sel := bo.Label
		if sel == nil {
			sel = co.DefaultLabelSelector
		}
		if sel == nil {
			sel = labels.Everything()
		}
		reqs, _ := sel.Requirements()
		for _, q := range reqs {
			if strings.HasPrefix(q.Key(), ShardLabelPrefix) && q.Key() != r.shardKey {
				return fmt.Errorf("%w: %s is cached by %s; ring %q cannot shard it too (a manager runs one ring)",
					ErrOtherRing, k.gvk.Kind, q.Key(), r.opts.Ring)
			}
		}
		bo.Label = sel.Add(*req)
		byObject[key] = bo
	}
	co.ByObject = byObject
	return nil
}

// Checker is the readiness check of the shard: it fails until the shard
// Lease is held and while it is not renewed in time.
func (r *Ring) Checker(*http.Request) error {
	h := r.first
	r.mu.Lock()
	if r.cur != nil {
		h = r.cur.holder
	}
	r.mu.Unlock()
	if !h.Valid(time.Now()) {
		return fmt.Errorf("sharding: ring %q: shard %q does not hold its Lease %s", r.opts.Ring, r.opts.Shard, h.Key())
	}
	return nil
}

// NeedLeaderElection returns false: every replica is a shard.
func (r *Ring) NeedLeaderElection() bool { return false }

// watchMembers reads the ring's Leases into the view that the webhook and
// Shards use, and kicks the sharder when the set of live shards changed.
// It reads every RetryPeriod, and sooner: when the hold of a live shard
// ends by this replica's observation (a timer set for that moment), and,
// when the client can watch (leasewatch.go), as soon as a Lease event may
// change the view (a new shard, a released or deleted Lease); the watch
// also keeps the observations of renewals fresh.
func (r *Ring) watchMembers(ctx context.Context) {
	changed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	if w, ok := r.watcher(); ok {
		wg.Go(func() {
			r.watchLeases(ctx, w, func(l *coordinationv1.Lease, deleted bool, at time.Time) {
				shard := l.Labels[ShardNameLabel]
				if shard == "" {
					return
				}
				v := r.view.Load()
				alive := v != nil && v.alive[shard]
				if !deleted {
					r.members.observe(shard, l, at)
				}
				// A renewal of a live shard only moves its expiry later.
				if !alive || deleted || lease.RecordOf(l.Spec).Holder == "" {
					signal(changed)
				}
			}, client.MatchingLabels{RingLabel: r.opts.Ring})
		})
	}
	timer := time.NewTimer(r.opts.RetryPeriod)
	defer timer.Stop()
	for {
		next := r.opts.RetryPeriod
		v, err := readView(ctx, r.c, r.members, r.opts.Namespace, r.opts.Ring, r.opts.VirtualNodes)
		if err == nil {
			old := r.view.Swap(v)
			r.metrics.shards.WithLabelValues(r.opts.Ring).Set(float64(v.ring.Len()))
			if old == nil || !equalShards(old.ring.Shards(), v.ring.Shards()) {
				r.log.Info("ring membership", "shards", v.ring.Shards())
				r.kickSharder()
			}
			if at := r.members.nextExpiry(v.alive); !at.IsZero() {
				if until := time.Until(at); until < next {
					next = max(until, 0) + time.Millisecond
				}
			}
		} else if ctx.Err() == nil {
			r.log.Error(err, "cannot read the ring's leases")
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

func (r *Ring) kickSharder() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

func equalShards(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
