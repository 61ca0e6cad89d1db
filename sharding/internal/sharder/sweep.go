package sharder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/sharding/internal/membership"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// sweepWorkers is the number of patches a sweep sends at once: a shard
// that is gone takes a share of every object with it, and one request at
// a time would make its objects wait for the sum of their latencies.
// While they arrive, a survivor's queue interleaves the repeat reconciles
// its own Updates cause with the moved objects still to come, so a slow
// relabelling delays the recovery twice. bench/sharding/cmd/recovery
// (kill, 2,000 objects, one worker per replica, 3 runs each, alternated,
// a 2-core VM at load 10 to 20): with 8 at once, relabelling the ~650
// objects of the killed shard took 1.1-2.5 s and 46-66 repeats ran before
// a survivor's last moved object (recovered 8.2-9.3 s); with 32, 0.64-0.68 s
// and 18-36 repeats (7.2-8.7 s).
const sweepWorkers = 32

// Result counts what one sweep saw and did (the public SweepResult).
type Result struct {
	Objects, Assigned, Reassigned, Drains, Pending, Conflicts int
	PerShard                                                  map[string]int
}

// add counts one object's outcome: m made (or not, when made is false)
// with the object on shard afterwards.
func (res *Result) add(m move, made, conflict bool, shard string, drainsOnly bool) {
	if !drainsOnly {
		res.Objects++
		if shard != "" {
			res.PerShard[shard]++
		}
	}
	if conflict {
		res.Conflicts++
	}
	if m.pending && (m.act == none || made) {
		res.Pending++
	}
	if !made {
		return
	}
	switch m.act {
	case assign:
		res.Assigned++
	case reassign:
		res.Reassigned++
	case drain:
		res.Drains++
	}
}

// Sweep lists every sharded object once and moves each towards its shard
// on the ring of live shards (see the public Ring.Sweep).
func (sh *Sharder) Sweep(ctx context.Context) (Result, error) {
	s := sh.spec
	start := time.Now()
	v, err := sh.members.ReadView(ctx)
	if err != nil {
		return Result{}, err
	}
	res := Result{PerShard: map[string]int{}}
	if v.Ring.Len() == 0 {
		return res, nil
	}
	deadBefore := v.Dead()
	if len(deadBefore) > 0 && sh.joinedSinceSwept(v) {
		// Drains first: a shard that is gone hands its objects to the
		// live shards, whose queues fill with them; the drains that a
		// joined shard needs are acknowledged by those same queues, so a
		// drain requested after the moves waits behind the reconciles of
		// the moved objects (BENCHMARKS-sharding.md, "Recovery": the
		// sharder killed during a scale-out). One more list, of metadata,
		// served from the watch cache.
		first := Result{PerShard: map[string]int{}}
		for _, k := range s.Kinds {
			if err := sh.sweepKind(ctx, v, k, &first, true); err != nil {
				return res, err
			}
		}
		res.Drains, res.Conflicts = first.Drains, first.Conflicts
	}
	for _, k := range s.Kinds {
		if err := sh.sweepKind(ctx, v, k, &res, false); err != nil {
			return res, err
		}
	}
	sh.swept.Store(&v.Alive)
	s.Metrics.Sweep.WithLabelValues(s.Ring).Observe(time.Since(start).Seconds())
	s.Metrics.Objects.DeletePartialMatch(map[string]string{"ring": s.Ring})
	for shard, n := range res.PerShard {
		s.Metrics.Objects.WithLabelValues(s.Ring, shard).Set(float64(n))
	}
	// A complete sweep moved every object away from the shards that were
	// gone when it began: their Leases can go.
	for shard, l := range deadBefore {
		if l.ResourceVersion == "" {
			continue
		}
		pre := metav1.Preconditions{ResourceVersion: &l.ResourceVersion}
		if err := s.C.Delete(ctx, &l, client.Preconditions(pre)); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			s.Log.Error(err, "cannot delete the lease of a gone shard", "gone", shard)
		}
	}
	s.Log.V(1).Info("swept", "objects", res.Objects, "assigned", res.Assigned, "reassigned", res.Reassigned,
		"drains", res.Drains, "pending", res.Pending, "conflicts", res.Conflicts, "took", time.Since(start).String())
	return res, nil
}

// joinedSinceSwept reports whether v has a live shard that the last
// complete sweep did not have (true before the first).
func (sh *Sharder) joinedSinceSwept(v *membership.View) bool {
	last := sh.swept.Load()
	if last == nil {
		return true
	}
	for s := range v.Alive {
		if !(*last)[s] {
			return true
		}
	}
	return false
}

// sweepKind sweeps the objects of kind k, page by page (SweepPageSize).
// The first page is a consistent list (resourceVersion ""); later pages
// follow its continue token, which pins them to the first page's
// resourceVersion. It is not resourceVersion "0": kube-apiserver ignores
// limit on a list with resourceVersion "0" (checked on v1.37.2, with and
// without resourceVersionMatch=NotOlderThan) and returns every object in
// one response, which the sharder would hold at once (see
// BenchmarkSharderHeap in bench/sharding). A consistent list with a limit
// costs the server little: from v1.31 it is served from the watch cache
// after one request for etcd's current revision (ConsistentListFromCache),
// and the continued pages from the cache's snapshot (v1.37.2:
// apiserver_storage_list_total counts them as storage="watchcache", and
// etcd sees no list). Older servers read these pages from etcd, as any
// paged list does. resourceVersionMatch=NotOlderThan with a known
// resourceVersion would be served from the cache as well, but fails with
// "too large resource version" if the cache cannot catch up within its
// wait, where a consistent list falls back to etcd. With drainsOnly it
// only requests drains (the objects it passes over are not counted).
func (sh *Sharder) sweepKind(ctx context.Context, v *membership.View, k spec.Kind, res *Result, drainsOnly bool) error {
	s := sh.spec
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
	cont := ""
	for {
		opts := []client.ListOption{client.Limit(s.SweepPageSize)}
		if cont != "" {
			opts = append(opts, client.Continue(cont))
		}
		list.Items = nil
		if err := s.C.List(ctx, list, opts...); err != nil {
			return fmt.Errorf("sharding: ring %q: sweep %s: %w", s.Ring, k.GVK.Kind, err)
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
			sem  = make(chan struct{}, sweepWorkers)
		)
		for i := range list.Items {
			obj := &list.Items[i]
			obj.SetGroupVersionKind(k.GVK)
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				o := sh.place(ctx, v, k, obj, drainsOnly)
				mu.Lock()
				defer mu.Unlock()
				res.add(o.move, o.made, o.conflict, o.shard, drainsOnly)
				if o.err != nil {
					errs = append(errs, o.err)
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		cont = list.Continue
		if cont == "" {
			return nil
		}
	}
}

// outcome is what place did with one object.
type outcome struct {
	move     move
	made     bool   // the move's patch was applied
	conflict bool   // the object changed twice under the sweep
	shard    string // its shard afterwards ("" unknown)
	err      error
}

// place makes the move decide returns for obj: it answers decide's reads
// (is the object's shard gone, is its owner on its shard), sends the
// patch with obj's resourceVersion as a precondition, counts it in the
// metrics, and on a conflict reads obj again, once, and places it anew.
func (sh *Sharder) place(ctx context.Context, v *membership.View, k spec.Kind, obj *metav1.PartialObjectMetadata, drainsOnly bool) outcome {
	s := sh.spec
	for retry := true; ; retry = false {
		lbl := obj.GetLabels()
		in := input{cur: lbl[s.ShardKey], draining: lbl[s.DrainKey] != "", want: v.Ring.Shard(spec.Key(k.GVK.GroupKind(), obj)),
			controlled: k.Controlled, drainsOnly: drainsOnly, now: time.Now(), shardKey: s.ShardKey, drainKey: s.DrainKey}
		in.alive = v.Alive[in.cur]
		var judged time.Time
		m := decide(in)
		for m.act == readPeer || m.act == readOwner {
			var ok bool
			var err error
			if m.act == readPeer {
				ok, judged, err = v.Gone(ctx, in.cur, s.MoveWindow()/2)
				if err != nil {
					return outcome{move: move{act: none}, err: err}
				}
				in.gone = triOf(ok)
			} else {
				ok, err = sh.ownerOn(ctx, k, obj, in.want)
				if err != nil {
					return outcome{move: move{act: none, pending: true}, shard: in.cur, err: err}
				}
				in.ownerOn = triOf(ok)
			}
			in.now = time.Now()
			m = decide(in)
		}
		if m.act == none {
			return outcome{move: m, shard: m.shard}
		}
		pctx, cancel := ctx, context.CancelFunc(func() {})
		if m.act == reassign {
			// A move without a drain: it must land within MoveWindow of
			// the judgment, before the gone shard, should it rejoin,
			// reconciles again.
			pctx, cancel = context.WithDeadline(ctx, judged.Add(s.MoveWindow()))
		}
		err := sh.patchLabels(pctx, obj, m.labels)
		cancel()
		switch {
		case err == nil:
			sh.count(m.act)
			return outcome{move: m, made: true, shard: m.shard}
		case apierrors.IsNotFound(err):
			return outcome{move: m}
		case apierrors.IsConflict(err) && retry:
			fresh := &metav1.PartialObjectMetadata{}
			fresh.SetGroupVersionKind(k.GVK)
			if err := s.C.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
				if apierrors.IsNotFound(err) {
					return outcome{move: m}
				}
				return outcome{move: m, err: fmt.Errorf("sharding: ring %q: get %s %s: %w", s.Ring, k.GVK.Kind, client.ObjectKeyFromObject(obj), err)}
			}
			obj = fresh
		case apierrors.IsConflict(err):
			return outcome{move: m, conflict: true}
		default:
			return outcome{move: m, err: fmt.Errorf("sharding: ring %q: label %s %s: %w", s.Ring, k.GVK.Kind, client.ObjectKeyFromObject(obj), err)}
		}
	}
}

func triOf(b bool) tri {
	if b {
		return yes
	}
	return no
}

// count records a move made in the metrics.
func (sh *Sharder) count(a action) {
	s := sh.spec
	switch a {
	case assign:
		s.Metrics.Assignments.WithLabelValues(s.Ring, "sweep").Inc()
	case reassign:
		s.Metrics.Moves.WithLabelValues(s.Ring, "lost").Inc()
	case child:
		s.Metrics.Moves.WithLabelValues(s.Ring, "child").Inc()
	case drain:
		s.Metrics.Moves.WithLabelValues(s.Ring, "drain").Inc()
	}
}

// ownerOn reports whether obj's controller owner is assigned to shard and
// not draining (true when obj has none, or it is gone).
func (sh *Sharder) ownerOn(ctx context.Context, k spec.Kind, obj client.Object, shard string) (bool, error) {
	s := sh.spec
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return true, nil // hashes as itself
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, nil
	}
	owner := &metav1.PartialObjectMetadata{}
	owner.SetGroupVersionKind(gv.WithKind(ref.Kind))
	err = s.C.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, owner)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("sharding: ring %q: owner of %s %s: %w", s.Ring, k.GVK.Kind, client.ObjectKeyFromObject(obj), err)
	}
	return owner.GetLabels()[s.ShardKey] == shard && owner.GetLabels()[s.DrainKey] == "", nil
}

// patchLabels merge-patches obj's labels (nil removes one), with obj's
// resourceVersion as a precondition.
func (sh *Sharder) patchLabels(ctx context.Context, obj *metav1.PartialObjectMetadata, lbl map[string]any) error {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(),
		"labels":          lbl,
	}})
	if err != nil {
		return err
	}
	return sh.spec.C.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
}
