package sharding

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/internal/lease"
	"github.com/kubeloop/kubeloop/sharding/internal/assign"
	"github.com/kubeloop/kubeloop/sharding/internal/gate"
	"github.com/kubeloop/kubeloop/sharding/internal/membership"
	"github.com/kubeloop/kubeloop/sharding/internal/sharder"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// Ring is this replica's membership in one ring, the façade over its
// parts (see the package doc): the membership (its shard Lease and its
// view of the other shards), the gate in front of its reconcilers, the
// assignment webhook and, on the replica elected among the ring, the
// sharder. New builds it in one step; run Start (or Run, with the cache
// the reconcilers read) once: a manager runnable that needs no
// leadership.
type Ring struct {
	spec    *spec.Spec
	opts    Options
	members *membership.Membership
	gate    *gate.Gate
	sharder *sharder.Sharder // runs in Labels mode only (ServerSide mode has no sharder)
	webhook http.Handler
	first   *lease.Holder // the shard Lease's holder of the first term (later terms get their own)
	kick    chan struct{} // the membership changed: the sharder sweeps, ServerSide mode steps
	ss      *serverSide   // ServerSide mode's state; nil in Labels mode (serverside.go)
	started atomic.Bool
}

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
	s := &spec.Spec{
		Ring: o.Ring, Shard: o.Shard, Namespace: o.Namespace,
		Holder:   o.Shard + "_" + string(uuid.NewUUID()),
		ShardKey: ShardLabel(o.Ring), DrainKey: DrainLabel(o.Ring),
		LeaseDuration: o.LeaseDuration, RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod,
		SweepInterval: o.SweepInterval, DrainCheckInterval: o.DrainCheckInterval,
		SweepPageSize: o.SweepPageSize, VirtualNodes: o.VirtualNodes,
		C:   c,
		Log: o.Logger.WithValues("ring", o.Ring, "shard", o.Shard),
	}
	if s.Kinds, err = kindsOf(c, o); err != nil {
		return nil, err
	}
	if s.Metrics, err = spec.NewMetrics(o.Metrics, o.Ring); err != nil {
		return nil, err
	}
	r := &Ring{spec: s, opts: o, kick: make(chan struct{}, 1)}
	var api lease.API
	var mode gate.Mode
	if o.Mode == ServerSide {
		r.ss = newServerSide(r)
		api, mode = r.ss.api, r.ss
	}
	r.members = membership.New(s, api, func() { spec.Signal(r.kick) })
	r.gate = gate.New(s, mode)
	w := o.Webhook
	cfg := assign.Config{Disabled: w.Disabled, ConfigurationName: w.ConfigurationName, Service: w.Service, URL: w.URL,
		CABundle: w.CABundle, TimeoutSeconds: w.TimeoutSeconds, NamespaceSelector: w.NamespaceSelector,
		ObjectSelector: w.ObjectSelector, Path: Path(o.Ring)}
	r.sharder = sharder.New(s, r.members, r.kick, func(ctx context.Context) error { return assign.Ensure(ctx, s, cfg) })
	r.webhook = assign.NewHandler(s, r.members.View)
	if r.first, err = r.members.NewShardHolder(); err != nil {
		return nil, fmt.Errorf("sharding: ring %q: %w", o.Ring, err)
	}
	return r, nil
}

// kindsOf resolves the sharded kinds of o in c's scheme.
func kindsOf(c client.Client, o Options) ([]spec.Kind, error) {
	var kinds []spec.Kind
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
		kinds = append(kinds, spec.Kind{GVK: gvk, Proto: obj, Controlled: controlled})
	}
	for _, obj := range o.Objects {
		add(obj, false)
	}
	for _, obj := range o.Controlled {
		add(obj, true)
	}
	return kinds, errors.Join(errs...)
}

// Name returns the ring's name.
func (r *Ring) Name() string { return r.spec.Ring }

// Shard returns this replica's shard name.
func (r *Ring) Shard() string { return r.spec.Shard }

// ShardLabel returns the label key that names an object's shard in this
// ring.
func (r *Ring) ShardLabel() string { return r.spec.ShardKey }

// DrainLabel returns the label key that marks an object of this ring
// draining.
func (r *Ring) DrainLabel() string { return r.spec.DrainKey }

// RetryPeriod returns the ring's RetryPeriod: the interval of its
// renewals and membership reads.
func (r *Ring) RetryPeriod() time.Duration { return r.spec.RetryPeriod }

// Shards returns the shards alive in this replica's last view of the
// ring, sorted; nil before the first read.
func (r *Ring) Shards() []string {
	if v := r.members.View(); v != nil {
		return v.Ring.Shards()
	}
	return nil
}

// Checker is the readiness check of the shard: it fails until the shard
// Lease is held and while it is not renewed in time.
func (r *Ring) Checker(*http.Request) error {
	h := r.first
	if t, _ := r.gate.Current(); t != nil {
		h = t.Holder
	}
	if !h.Valid(time.Now()) {
		return fmt.Errorf("sharding: ring %q: shard %q does not hold its Lease %s", r.spec.Ring, r.spec.Shard, h.Key())
	}
	return nil
}

// NeedLeaderElection returns false: every replica is a shard.
func (r *Ring) NeedLeaderElection() bool { return false }

// WebhookHandler returns the assignment webhook, to serve at
// Path(ring) on the webhook server (the manager does this). It answers
// CREATE and UPDATE of sharded objects that carry no shard label: it
// assigns them to their shard on this replica's view of the ring. An
// UPDATE that drops the label of an object that was not draining keeps
// its old shard (a client wrote an object read before it was assigned);
// the UPDATE that acknowledges a drain gets the new shard at once. It
// never moves an assigned object. With no view yet, or no live shard, it
// admits the object unchanged and the sweep assigns it later.
func (r *Ring) WebhookHandler() http.Handler { return r.webhook }
