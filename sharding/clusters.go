package sharding

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/sharding/internal/gate"
)

// The seam that places other things than labelled objects on the ring:
// the clusters of a fleet (multicluster.Sharded). Such a placement reads
// the live shards and what each published with Members, publishes its own
// shard's view with PublishView (one short annotation on the shard's own
// Lease, carried by its renewals: no extra writes), and admits its work
// under the shard's hold with Admit, fenced and counted as the gate's
// reconciles are (Start waits for them before it releases the Lease).

// ViewAnnotation is the annotation of a shard Lease that holds the view
// the shard published with PublishView.
const ViewAnnotation = "sharding.kubeloop.dev/view"

// Member is one live shard of the ring, as one read of its Leases showed
// it.
type Member struct {
	// Shard is the shard's name.
	Shard string
	// View is the value the shard last published with PublishView, as
	// stored in its Lease; "" when none.
	View string
}

// Members lists the ring's shard Leases and returns the shards alive by
// this replica's observation (the rule of Shards: a Lease counts as gone
// once it has not changed for its leaseDurationSeconds by this replica's
// clock, or was released), sorted by name, each with the view its Lease
// carries. This replica's own shard is among them while its Lease is
// valid.
func (r *Ring) Members(ctx context.Context) ([]Member, error) {
	var leases coordinationv1.LeaseList
	s := r.spec
	if err := s.C.List(ctx, &leases, client.InNamespace(s.Namespace), client.MatchingLabels{RingLabel: s.Ring}); err != nil {
		return nil, fmt.Errorf("sharding: ring %q: list shard leases in %s: %w", s.Ring, s.Namespace, err)
	}
	now := time.Now() // after the answer: every Lease in it was stored before
	out := make([]Member, 0, len(leases.Items))
	for i := range leases.Items {
		l := &leases.Items[i]
		shard := l.Labels[ShardNameLabel]
		if shard == "" || r.members.Observers().Expired(shard, l, now) {
			continue
		}
		out = append(out, Member{Shard: shard, View: l.Annotations[ViewAnnotation]})
	}
	slices.SortFunc(out, func(a, b Member) int {
		switch {
		case a.Shard < b.Shard:
			return -1
		case a.Shard > b.Shard:
			return 1
		}
		return 0
	})
	return out, nil
}

// PublishView makes this shard's Lease carry view in ViewAnnotation from
// its next renewal on (at most RetryPeriod later; see Members to see it
// stored). It applies to the current hold of the Lease: a later term
// (after a rejoin) keeps the value stored last until PublishView is called
// again, so a placement calls it after every read. "" removes it.
func (r *Ring) PublishView(view string) {
	r.first.SetAnnotation(ViewAnnotation, view)
	if t, _ := r.gate.Current(); t != nil {
		t.Holder.SetAnnotation(ViewAnnotation, view)
	}
}

// Term returns the number of the shard's current hold of its Lease (1 for
// the first, one more for each rejoin; 0 before the first) and whether it
// admits work now: the Lease is held and valid, and Start is neither
// stopping nor waiting out a rejoin's quarantine.
func (r *Ring) Term() (int, bool) {
	t, admits := r.gate.Current()
	if t == nil {
		return 0, false
	}
	return t.N, admits
}

// Admission is one unit of work (a reconcile) admitted under a term of
// the shard's hold by Admit. Call Done when the work ends.
type Admission struct {
	g    *gate.Gate
	t    *gate.Term
	done atomic.Bool
}

// Admit admits one unit of work under the shard's current term, as the
// gate of Reconciler admits a reconcile: while the shard holds a valid
// Lease and Start is not stopping (a call that comes while the shard is
// still acquiring its first Lease waits for it up to RetryPeriod). It
// reports false when it admits nothing. Start, when its context ends,
// waits for every admitted work to call Done before it releases the
// Lease.
func (r *Ring) Admit(ctx context.Context) (*Admission, bool) {
	t := r.gate.Enter(ctx)
	if t == nil {
		return nil, false
	}
	return &Admission{g: r.gate, t: t}, true
}

// Term returns the number of the term the work was admitted in.
func (a *Admission) Term() int { return a.t.N }

// Context returns a context for the work: it carries the fence of the
// term's hold (client.WithFence: writes with it fail with an error
// wrapping ErrLeaseLost once the hold is no longer valid) and ends when
// the term ends or ctx does. Call the CancelFunc when the work ends.
func (a *Admission) Context(ctx context.Context) (context.Context, context.CancelFunc) {
	return gate.Fenced(ctx, a.t)
}

// Done ends the work: Start no longer waits for it. Calls after the
// first do nothing.
func (a *Admission) Done() {
	if a.done.CompareAndSwap(false, true) {
		a.g.Leave()
	}
}
