package sharding

import (
	"context"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding/internal/gate"
	"github.com/kubeloop/kubeloop/sharding/internal/ranges"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// configureCache is ConfigureCache in ServerSide mode: every sharded kind
// lists and watches with the shard's shardSelector.
func (s *serverSide) configureCache(co *cache.Options) error {
	r := s.r
	byObject := make(map[client.Object]cache.ByObject, len(co.ByObject)+len(r.spec.Kinds))
	maps.Copy(byObject, co.ByObject)
	keyOf := map[schema.GroupVersionKind]client.Object{}
	for obj := range byObject {
		gvk, err := apiutil.GVKForObject(obj, r.spec.C.Scheme())
		if err != nil {
			return fmt.Errorf("%w: cache ByObject key %T: %w", ErrNotInScheme, obj, err)
		}
		keyOf[gvk] = obj
	}
	for _, k := range r.spec.Kinds {
		key, ok := keyOf[k.GVK]
		if !ok {
			key = k.Proto
		}
		bo := byObject[key]
		if bo.ShardSelector != nil && bo.ShardSelector != cache.ShardSelector(s.sel) {
			return fmt.Errorf("%w: %s already has a shard selector; ring %q cannot shard it too (a manager runs one ring)",
				ErrOtherRing, k.GVK.Kind, r.opts.Ring)
		}
		bo.ShardSelector = s.sel
		byObject[key] = bo
	}
	co.ByObject = byObject
	return nil
}

// Reconcile is the gate's Reconcile in ServerSide mode (a gate.Mode), once the term
// admitted it: it passes req to inner only while this shard admits the
// segment of the object's key, and counts it in flight there, so that a
// segment given up waits for it. A request of an object outside the
// admitted segments is dropped (its new shard lists the object and
// reconciles it); the NotFound of an object that left the cache with a
// segment is dropped too (a move, not a deletion). By namespace, a
// NotFound is judged by the request's namespace; by uid, another NotFound
// is passed on (the object was this shard's: only its cache's events and
// its own requeues bring requests).
func (s *serverSide) Reconcile(ctx context.Context, t *gate.Term, k spec.Kind, req reconcile.Request, inner reconcile.Reconciler) (reconcile.Result, error) {
	r := s.r
	cobj, err := gate.NewObject(r.spec, k)
	if err != nil {
		return reconcile.Result{}, err
	}
	reader := t.Reader
	hkey := k.GVK.Kind + "/" + req.String()
	seg := -1
	err = reader.Get(ctx, req.NamespacedName, cobj)
	switch {
	case apierrors.IsNotFound(err):
		s.mu.Lock()
		_, moved := s.dropped[hkey]
		delete(s.dropped, hkey)
		s.mu.Unlock()
		if moved {
			return reconcile.Result{}, nil
		}
		if r.opts.Key == ShardByNamespace {
			seg = ranges.Of(ranges.Hash(req.Namespace))
		}
	case err != nil:
		return reconcile.Result{}, err
	default:
		seg = s.segmentOf(cobj)
		// Back in an admitted segment: a later NotFound is a deletion.
		// (Outside them it is still to leave the cache: keep the mark.)
		s.mu.Lock()
		if s.admitted.Has(seg) {
			delete(s.dropped, hkey)
		}
		s.mu.Unlock()
	}
	if seg >= 0 {
		if !s.enter(seg) {
			r.spec.Log.V(1).Info("not in this shard's hash ranges", "kind", k.GVK.Kind, "object", req.String(), "segment", seg)
			return reconcile.Result{}, nil
		}
		defer s.leave(seg)
	}
	// Writes of the reconcile are fenced by this term's hold.
	ictx, cancel := gate.Fenced(ctx, t)
	defer cancel()
	return inner.Reconcile(ictx, req)
}

// waitIdle waits until no reconcile of set's segments is in flight, or
// ctx ends (false).
func (s *serverSide) waitIdle(ctx context.Context, set ranges.Set) bool {
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.idle.Broadcast()
		s.mu.Unlock()
	})
	defer stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for ctx.Err() == nil {
		busy := false
		for _, k := range set.Segments() {
			if s.inflight[k] > 0 {
				busy = true
				break
			}
		}
		if !busy {
			return true
		}
		s.idle.Wait()
	}
	return false
}

// enter admits a reconcile of an object in segment k; it reports whether
// it did (then leave must follow).
func (s *serverSide) enter(k int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.admitted.Has(k) {
		return false
	}
	s.inflight[k]++
	return true
}

func (s *serverSide) leave(k int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight[k]--
	if s.inflight[k] == 0 {
		s.idle.Broadcast()
	}
}

// Ranges returns, in ServerSide mode, the hash segments (of
// internal/ranges' 127) this shard admits now, as runs ("0-41,84-126");
// "" in Labels mode.
func (r *Ring) Ranges() string {
	if r.ss == nil {
		return ""
	}
	return r.ss.admittedSet().String()
}

// segmentOf returns the segment of obj's key field.
func (s *serverSide) segmentOf(obj client.Object) int {
	if s.r.opts.Key == ShardByNamespace {
		return ranges.Of(ranges.Hash(obj.GetNamespace()))
	}
	return ranges.Of(ranges.Hash(string(obj.GetUID())))
}

func (s *serverSide) admittedSet() ranges.Set {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.admitted
}
