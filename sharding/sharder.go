package sharding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/lease"
)

// campaign runs for the ring's sharder Lease until ctx ends and, while it
// holds it, runs the sharder. A lost sharder Lease stops the sharder and
// the campaign starts over; the shard itself is unaffected.
func (r *Ring) campaign(ctx context.Context) {
	changed := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if w, ok := r.watcher(); ok {
		wg.Go(func() {
			r.watchLeases(wctx, w, func(*coordinationv1.Lease, bool, time.Time) { signal(changed) },
				client.MatchingFields{"metadata.name": sharderLeaseName(r.opts.Ring)})
		})
	}
	for ctx.Err() == nil {
		el, err := newHolder(r.c, r.opts, sharderLeaseName(r.opts.Ring), r.holder, nil)
		if err != nil { // the options were validated by New
			r.log.Error(err, "cannot campaign for the sharder")
			return
		}
		if r.acquireSharder(ctx, el, changed) != nil {
			return
		}
		r.log.Info("running the sharder", "lease", el.Key())
		r.metrics.leading.WithLabelValues(r.opts.Ring).Set(1)
		lead, stop := context.WithCancel(ctx)
		// The sharder's patches are fenced by its Lease: a sharder that
		// lost it writes nothing more.
		lead = client.WithFence(lead, el)
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.runSharder(lead)
		}()
		err = el.Renew(ctx)
		stop()
		<-done
		r.metrics.leading.WithLabelValues(r.opts.Ring).Set(0)
		if err != nil {
			r.log.Error(err, "sharder lease lost; campaigning again")
			continue
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.RenewDeadline)
		if _, err := el.Release(rctx); err != nil {
			r.log.Error(err, "could not release the sharder lease")
		}
		cancel()
	}
}

// acquireSharder tries to acquire the sharder Lease with el until it
// succeeds (nil) or ctx ends (ctx.Err()). It tries at once, whenever the
// Lease changed (changed, from the watch: el then observes a renewal
// within an event's latency of its storage), when the hold el last
// observed ends by that observation, and otherwise every RetryPeriod plus
// up to JitterFactor of it, as the lease core's Acquire does. el judges
// expiry from its own read, which returned before this loop noted the
// record, so at the noted time plus the record's duration the hold has
// ended for el too. (A killed sharder's Lease is so taken over about
// LeaseDuration after its last renewal; with Acquire's fixed period it
// was up to 2*1.2*RetryPeriod later.)
func (r *Ring) acquireSharder(ctx context.Context, el *lease.Holder, changed <-chan struct{}) error {
	var (
		seen   lease.Record
		seenAt time.Time
	)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		tctx, cancel := context.WithTimeout(ctx, el.TryTimeout())
		err := el.TryAcquireOrRenew(tctx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		now := time.Now()
		wait := r.opts.RetryPeriod + time.Duration(rand.Float64()*lease.JitterFactor*float64(r.opts.RetryPeriod))
		if rec, ok := el.Observed(); ok {
			if seenAt.IsZero() || !rec.Equal(seen) {
				seen, seenAt = rec, now
			}
			// Only an expiry still to come shortens the wait: a hold that
			// ended already and still failed (a conflict with another
			// candidate, an unreachable API server) waits the period.
			if until := seenAt.Add(rec.Duration).Sub(now); rec.Holder != "" && until > 0 {
				wait = min(wait, until+time.Millisecond)
			}
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-changed:
			t.Stop()
		}
	}
}

// runSharder keeps the webhook configuration up to date and sweeps: at
// once, when the membership changes, every SweepInterval, and every
// DrainCheckInterval while drains are pending.
func (r *Ring) runSharder(ctx context.Context) {
	next := time.Duration(0)
	for {
		timer := time.NewTimer(next)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-r.kick:
			timer.Stop()
		case <-timer.C:
		}
		if err := r.ensureWebhookConfiguration(ctx); err != nil && ctx.Err() == nil {
			r.log.Error(err, "cannot update the webhook configuration; the sweep assigns objects meanwhile")
		}
		res, err := r.Sweep(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			r.log.Error(err, "sweep failed")
			next = r.opts.DrainCheckInterval
		case res.Pending > 0 || res.Conflicts > 0:
			next = r.opts.DrainCheckInterval
		default:
			next = r.opts.SweepInterval
		}
	}
}

// sweepWorkers is the number of patches a sweep sends at once.
const sweepWorkers = 8

// SweepResult counts what one sweep saw and did.
type SweepResult struct {
	// Objects is the number of sharded objects listed.
	Objects int
	// Assigned were unassigned and got a shard.
	Assigned int
	// Reassigned belonged to a shard that is gone and got a live one.
	Reassigned int
	// Drains is the number of drains requested.
	Drains int
	// Pending are waiting for a drain to be acknowledged, or children for
	// their owner to move.
	Pending int
	// Conflicts are objects that changed between the list and the patch;
	// the next sweep looks at them again.
	Conflicts int
	// PerShard counts the objects assigned to each shard after the sweep.
	PerShard map[string]int
}

// Sweep lists every sharded object once, metadata only, page by page
// (SweepPageSize; a consistent list, which API servers from v1.31 serve
// from their watch cache), and moves each
// towards its shard on the ring of live shards: it assigns unassigned
// objects, reassigns the objects of shards that are gone, requests a drain
// of objects whose shard is alive but no longer theirs, and moves children
// whose owner already sits on their shard. Every patch carries the
// resourceVersion it was decided on, so a concurrent change makes it a
// conflict, not a wrong move. The sharder calls it; it is exported for
// tests and tools. It keeps one page in memory at a time.
func (r *Ring) Sweep(ctx context.Context) (SweepResult, error) {
	start := time.Now()
	v, err := readView(ctx, r.c, r.members, r.opts.Namespace, r.opts.Ring, r.opts.VirtualNodes)
	if err != nil {
		return SweepResult{}, err
	}
	res := SweepResult{PerShard: map[string]int{}}
	if v.ring.Len() == 0 {
		return res, nil
	}
	deadBefore := maps.Clone(v.dead)
	if len(v.dead) > 0 && r.joinedSinceSwept(v) {
		// Drains first: a shard that is gone hands its objects to the
		// live shards, whose queues fill with them; the drains that a
		// joined shard needs are acknowledged by those same queues, so a
		// drain requested after the moves waits behind the reconciles of
		// the moved objects (BENCHMARKS-sharding.md, "Recovery": the
		// sharder killed during a scale-out). One more list, of metadata,
		// served from the watch cache.
		var first SweepResult
		for _, k := range r.kinds {
			if err := r.sweepKind(ctx, v, k, &first, true); err != nil {
				return res, err
			}
		}
		res.Drains, res.Conflicts = first.Drains, first.Conflicts
	}
	for _, k := range r.kinds {
		if err := r.sweepKind(ctx, v, k, &res, false); err != nil {
			return res, err
		}
	}
	r.swept.Store(&v.alive)
	r.metrics.sweep.WithLabelValues(r.opts.Ring).Observe(time.Since(start).Seconds())
	r.metrics.objects.DeletePartialMatch(map[string]string{"ring": r.opts.Ring})
	for s, n := range res.PerShard {
		r.metrics.objects.WithLabelValues(r.opts.Ring, s).Set(float64(n))
	}
	// A complete sweep moved every object away from the shards that were
	// gone when it began: their Leases can go.
	for shard, l := range deadBefore {
		if l.ResourceVersion == "" {
			continue
		}
		pre := metav1.Preconditions{ResourceVersion: &l.ResourceVersion}
		if err := r.c.Delete(ctx, &l, client.Preconditions(pre)); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			r.log.Error(err, "cannot delete the lease of a gone shard", "gone", shard)
		}
	}
	r.log.V(1).Info("swept", "objects", res.Objects, "assigned", res.Assigned, "reassigned", res.Reassigned,
		"drains", res.Drains, "pending", res.Pending, "conflicts", res.Conflicts, "took", time.Since(start).String())
	return res, nil
}

// joinedSinceSwept reports whether v has a live shard that the last
// complete sweep of this Ring did not have (true before the first).
func (r *Ring) joinedSinceSwept(v *view) bool {
	last := r.swept.Load()
	if last == nil {
		return true
	}
	for s := range v.alive {
		if !(*last)[s] {
			return true
		}
	}
	return false
}

// sweepKind sweeps the objects of kind k. With drainsOnly it only
// requests drains (the objects it passes over are not counted).
func (r *Ring) sweepKind(ctx context.Context, v *view, k kind, res *SweepResult, drainsOnly bool) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
	cont := ""
	for {
		// Pages of SweepPageSize. The first page is a consistent list
		// (resourceVersion ""); later pages follow its continue token,
		// which pins them to the first page's resourceVersion. It is not
		// resourceVersion "0": kube-apiserver ignores limit on a list with
		// resourceVersion "0" (checked on v1.37.2, with and without
		// resourceVersionMatch=NotOlderThan) and returns every object in
		// one response, which the sharder would hold at once (see
		// BenchmarkSharderHeap in bench/sharding). A consistent list with
		// a limit costs the server little: from v1.31 it is served from
		// the watch cache after one request for etcd's current revision
		// (ConsistentListFromCache), and the continued pages from the
		// cache's snapshot (v1.37.2: apiserver_storage_list_total counts
		// them as storage="watchcache", and etcd sees no list). Older
		// servers read these pages from etcd, as any paged list does.
		// resourceVersionMatch=NotOlderThan with a known resourceVersion
		// would be served from the cache as well, but fails with "too
		// large resource version" if the cache cannot catch up within
		// its wait, where a consistent list falls back to etcd.
		opts := []client.ListOption{client.Limit(r.opts.SweepPageSize)}
		if cont != "" {
			opts = append(opts, client.Continue(cont))
		}
		list.Items = nil
		if err := r.c.List(ctx, list, opts...); err != nil {
			return fmt.Errorf("sharding: ring %q: sweep %s: %w", r.opts.Ring, k.gvk.Kind, err)
		}
		// Patches go out sweepWorkers at a time: a shard that is gone
		// takes a share of every object with it, and one request at a
		// time would make its objects wait for the sum of their latencies.
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
			sem  = make(chan struct{}, sweepWorkers)
		)
		for i := range list.Items {
			obj := &list.Items[i]
			obj.SetGroupVersionKind(k.gvk)
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				var one SweepResult
				shard, err := r.place(ctx, v, k, obj, &one, true, drainsOnly)
				mu.Lock()
				defer mu.Unlock()
				if !drainsOnly {
					res.Objects++
				}
				res.Assigned += one.Assigned
				res.Reassigned += one.Reassigned
				res.Drains += one.Drains
				res.Pending += one.Pending
				res.Conflicts += one.Conflicts
				if err != nil {
					errs = append(errs, err)
				}
				if shard != "" && !drainsOnly {
					res.PerShard[shard]++
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

// place decides obj's move and makes it. It returns the shard obj is
// assigned to afterwards ("" when unknown). On a conflict it reads obj
// again (once, with retry) and decides anew. With drainsOnly it makes no
// move but a drain request.
func (r *Ring) place(ctx context.Context, v *view, k kind, obj *metav1.PartialObjectMetadata, res *SweepResult, retry, drainsOnly bool) (string, error) {
	lbl := obj.GetLabels()
	cur, draining := lbl[r.shardKey], lbl[r.drainKey] != ""
	want := v.ring.Shard(Key(k.gvk.GroupKind(), obj))
	var patch map[string]any
	var counted func() // counts the move once it is made
	patchCtx := ctx
	switch {
	case cur == "" && drainsOnly:
		return "", nil
	case cur == "":
		patch = map[string]any{r.shardKey: want, r.drainKey: nil}
		counted = func() {
			res.Assigned++
			r.metrics.assignments.WithLabelValues(r.opts.Ring, "sweep").Inc()
		}
	case cur == want:
		if draining {
			res.Pending++
		}
		return cur, nil
	case drainsOnly && (!v.alive[cur] || k.controlled || draining):
		return cur, nil
	default:
		gone, judged, err := v.gone(ctx, r.c, r.opts.Namespace, r.opts.Ring, cur, r.moveWindow()/2)
		if err != nil {
			return "", err
		}
		switch {
		case gone:
			// A move without a drain: it must land within moveWindow of
			// the judgment, before the gone shard, should it rejoin,
			// reconciles again.
			var cancel context.CancelFunc
			patchCtx, cancel = context.WithDeadline(ctx, judged.Add(r.moveWindow()))
			defer cancel()
			patch = map[string]any{r.shardKey: want, r.drainKey: nil}
			counted = func() {
				res.Reassigned++
				r.metrics.moves.WithLabelValues(r.opts.Ring, "lost").Inc()
			}
		case !v.alive[cur]:
			return cur, nil // alive but newer than the view
		case k.controlled:
			ok, err := r.ownerOn(ctx, k, obj, want)
			if err != nil || !ok {
				res.Pending++
				return cur, err
			}
			patch = map[string]any{r.shardKey: want, r.drainKey: nil}
			counted = func() { r.metrics.moves.WithLabelValues(r.opts.Ring, "child").Inc() }
		case draining:
			res.Pending++
			return cur, nil
		default:
			patch = map[string]any{r.drainKey: nowMillis(time.Now())}
			counted = func() {
				res.Drains++
				res.Pending++
				r.metrics.moves.WithLabelValues(r.opts.Ring, "drain").Inc()
			}
			want = cur
		}
	}
	err := r.patchLabels(patchCtx, obj, patch)
	switch {
	case err == nil:
		counted()
		return want, nil
	case apierrors.IsNotFound(err):
		return "", nil
	case apierrors.IsConflict(err) && retry:
		fresh := &metav1.PartialObjectMetadata{}
		fresh.SetGroupVersionKind(k.gvk)
		if err := r.c.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
			if apierrors.IsNotFound(err) {
				return "", nil
			}
			return "", fmt.Errorf("sharding: ring %q: get %s %s: %w", r.opts.Ring, k.gvk.Kind, client.ObjectKeyFromObject(obj), err)
		}
		return r.place(ctx, v, k, fresh, res, false, drainsOnly)
	case apierrors.IsConflict(err):
		res.Conflicts++
		return "", nil
	}
	return "", fmt.Errorf("sharding: ring %q: label %s %s: %w", r.opts.Ring, k.gvk.Kind, client.ObjectKeyFromObject(obj), err)
}

// ownerOn reports whether obj's controller owner is assigned to shard.
func (r *Ring) ownerOn(ctx context.Context, k kind, obj client.Object, shard string) (bool, error) {
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
	err = r.c.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, owner)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("sharding: ring %q: owner of %s %s: %w", r.opts.Ring, k.gvk.Kind, client.ObjectKeyFromObject(obj), err)
	}
	return owner.GetLabels()[r.shardKey] == shard && owner.GetLabels()[r.drainKey] == "", nil
}

// patchLabels merge-patches obj's labels (nil removes one), with obj's
// resourceVersion as a precondition.
func (r *Ring) patchLabels(ctx context.Context, obj *metav1.PartialObjectMetadata, lbl map[string]any) error {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(),
		"labels":          lbl,
	}})
	if err != nil {
		return err
	}
	return r.c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data))
}
