package membership

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/sharding/internal/hashring"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// View is the ring's membership as read from its shard Leases at one
// moment: the shards whose Lease is valid, the hash ring over them, and
// the Leases of shards that are gone (expired or released).
type View struct {
	// At is the local time the read was answered.
	At time.Time
	// Ring is the hash ring over the live shards.
	Ring *hashring.Ring
	// Alive are the live shards.
	Alive map[string]bool

	spec    *spec.Spec
	members *Observers
	mu      sync.Mutex                      // guards dead and judged during a sweep
	dead    map[string]coordinationv1.Lease // by shard name
	// judged is, per dead shard, the local time just before the read that
	// judged it gone was sent (see spec.MoveWindow).
	judged map[string]time.Time
}

// ReadView lists the ring's shard Leases and judges each by members, this
// replica's observations, at the time the list was answered.
func ReadView(ctx context.Context, s *spec.Spec, m *Observers) (*View, error) {
	r, namespace, ring := s.C, s.Namespace, s.Ring
	var leases coordinationv1.LeaseList
	sent := time.Now()
	if err := r.List(ctx, &leases, client.InNamespace(namespace), client.MatchingLabels{spec.RingLabel: ring}); err != nil {
		return nil, fmt.Errorf("sharding: ring %q: list shard leases in %s: %w", ring, namespace, err)
	}
	now := time.Now() // after the answer: every Lease in it was stored before
	v := &View{At: now, spec: s, members: m, Alive: map[string]bool{}, dead: map[string]coordinationv1.Lease{}, judged: map[string]time.Time{}}
	var names []string
	listed := map[string]bool{}
	for _, l := range leases.Items {
		shard := l.Labels[spec.ShardNameLabel]
		if shard == "" {
			continue
		}
		listed[shard] = true
		if m.Expired(shard, &l, now) {
			v.dead[shard] = l
			v.judged[shard] = sent
			continue
		}
		v.Alive[shard] = true
		names = append(names, shard)
	}
	m.KeepOnly(listed)
	slices.Sort(names)
	v.Ring = hashring.New(names, s.VirtualNodes)
	return v, nil
}

// Gone reports whether shard is known to be gone, and, if so, the local
// time just before the read that judged it so was sent: its Lease is in
// the view as expired or released, judged less than fresh ago, or, for a
// shard the view does not know (its Lease may be newer than the view) or
// judged longer ago, a fresh read finds no Lease or one that is expired or
// released by this replica's observation. A shard that holds no Lease
// reconciles nothing, so its objects may be given to others; a gone shard
// that rejoins does not reconcile before moveWindow after its
// re-acquisition, so a move based on a judgment younger than moveWindow
// cannot overlap its reconciles.
func (v *View) Gone(ctx context.Context, shard string, fresh time.Duration) (bool, time.Time, error) {
	r, namespace, ring := v.spec.C, v.spec.Namespace, v.spec.Ring
	if v.Alive[shard] {
		return false, time.Time{}, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.dead[shard]; ok && time.Since(v.judged[shard]) < fresh {
		return true, v.judged[shard], nil
	}
	var l coordinationv1.Lease
	sent := time.Now()
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: spec.LeaseName(ring, shard)}, &l)
	if apierrors.IsNotFound(err) {
		if _, ok := v.dead[shard]; !ok {
			v.dead[shard] = coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: spec.LeaseName(ring, shard), Namespace: namespace}}
		}
		v.judged[shard] = sent
		return true, sent, nil
	}
	if err != nil {
		return false, time.Time{}, fmt.Errorf("sharding: ring %q: get lease of shard %q: %w", ring, shard, err)
	}
	if v.members.Expired(shard, &l, time.Now()) {
		if _, ok := v.dead[shard]; !ok {
			v.dead[shard] = l
		}
		v.judged[shard] = sent
		return true, sent, nil
	}
	// Alive (it rejoined, or its Lease is newer than the view): leave its
	// objects alone until the next view includes it.
	delete(v.dead, shard)
	delete(v.judged, shard)
	return false, time.Time{}, nil
}

// Dead returns the Leases of the shards the view knows to be gone, by
// shard name (a copy).
func (v *View) Dead() map[string]coordinationv1.Lease {
	v.mu.Lock()
	defer v.mu.Unlock()
	return maps.Clone(v.dead)
}
