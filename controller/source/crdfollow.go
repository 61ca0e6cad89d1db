package source

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/handler"
)

// Retries of the question "is the kind served?" while a CRD of its group
// exists but the mapper does not know the kind yet: the CRD is being
// established, or discovery has not caught up with it. Each retry that
// misses refreshes the group's discovery (two or three small requests), so
// they are spaced out and bounded; any later change of a CRD of the group
// starts them again.
const (
	firstRetry  = 100 * time.Millisecond
	maxRetry    = 5 * time.Second
	maxAttempts = 12 // about 40 s in all
)

// retryDelay is the wait before retry n (from 0): doubling from
// firstRetry, at most maxRetry.
func retryDelay(n int) time.Duration {
	d := firstRetry
	for range n {
		if d *= 2; d >= maxRetry {
			return maxRetry
		}
	}
	return d
}

// follower is the state of CRDSource.run's loop. Only that goroutine uses
// it.
type follower struct {
	s   *CRDSource
	run *crdRun
	q   handler.Queue
	log logr.Logger

	act      *activation // nil while the kind waits
	attempts int         // retries since the last CRD event
	// backed: a CRD has served the kind, so the kind is never taken for
	// one served without a CRD (discovery lags behind a deletion).
	backed bool
	// verified is the CRD whose kind the mapper was last asked about after
	// a reset, so that its answer is not from before the CRD existed.
	verified types.UID
}

// activation is one life of the kind's informer, from served to gone.
type activation struct {
	ks      *KindSource
	cancel  context.CancelFunc
	crdName string // "" when no CRD serves the kind (a built-in or aggregated kind)
	uid     types.UID
	synced  chan struct{} // closed when ks synced
	// announced: the loop saw synced closed.
	announced bool
}

func (f *follower) loop(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	defer func() {
		if f.act != nil {
			f.act.cancel() // the informer stays: the cache stops it
		}
	}()
	for {
		retry := f.step(ctx)
		var synced <-chan struct{}
		switch {
		case f.act == nil:
			f.run.settle()
		case !f.act.announced:
			synced = f.act.synced
		}
		var wake <-chan time.Time
		if retry && f.attempts < maxAttempts {
			timer.Reset(retryDelay(f.attempts))
			f.attempts++
			wake = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-f.s.poke:
			f.attempts = 0
		case <-wake:
		case <-synced:
			f.act.announced = true
			f.run.settle()
			f.log.Info("Kind served; its informer synced")
		}
		timer.Stop()
	}
}

// step brings the source in line with what it knows of the CRDs, and
// reports whether to ask again later.
func (f *follower) step(ctx context.Context) (retry bool) {
	crds := f.s.snapshot()
	if f.act != nil {
		if f.act.crdName == "" {
			return false
		}
		if c, ok := crds[f.act.crdName]; ok && c.uid == f.act.uid {
			return false // served; Terminating keeps it so until it is gone
		}
		f.deactivate(ctx)
	}
	name, ok, err := f.served()
	switch {
	case err != nil:
		f.log.V(1).Info("Cannot tell whether the kind is served yet; asking again", "error", err.Error())
		return true
	case !ok:
		return anyLive(crds) // a CRD of the group may be the kind's, being established
	}
	c, found := crds[name]
	switch {
	case found && c.uid != f.verified && f.resetMapper():
		// The mapper may have answered from discovery fetched before this
		// CRD existed (the previous one's): ask discovery again, once per
		// CRD, now that the source has seen it.
		f.verified = c.uid
		if name, ok, err = f.served(); err != nil || !ok {
			return err != nil || anyLive(crds)
		}
		c, found = crds[name]
	case !found && !f.backed && f.resetMapper():
		// The mapper may remember a kind whose CRD is gone: ask discovery.
		if name, ok, err = f.served(); err != nil || !ok {
			return err != nil || anyLive(crds)
		}
		c, found = crds[name]
	}
	switch {
	case found && c.terminating:
		return false // gone soon; the deletion or a new CRD wakes us
	case found:
		f.backed = true
		f.activate(ctx, name, c.uid)
	case f.backed:
		// Discovery still lists the kind of a CRD that is gone (it lags
		// behind the deletion): wait for the CRD to return.
		return false
	default:
		f.activate(ctx, "", "") // served without a CRD: built in or aggregated
	}
	return f.act == nil
}

// served asks the mapper for the kind and returns the name its CRD would
// have (<resource>.<group>). The mapper refreshes the group's discovery
// when it does not know the kind.
func (f *follower) served() (crdName string, ok bool, err error) {
	gvk := f.s.gvk
	mapping, err := f.s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return mapping.Resource.Resource + "." + gvk.Group, true, nil
}

func anyLive(crds map[string]crdState) bool {
	for _, c := range crds {
		if !c.terminating {
			return true
		}
	}
	return false
}

// resetMapper makes the mapper forget what it discovered, when it can, and
// reports whether it did.
func (f *follower) resetMapper() bool {
	r, ok := f.s.mapper.(meta.ResettableRESTMapper)
	if ok {
		r.Reset()
	}
	return ok
}

// activate starts the kind's informer and hands its events to the handler.
func (f *follower) activate(ctx context.Context, crdName string, uid types.UID) {
	t := f.s.tmpl
	ks := &KindSource{cache: t.cache, obj: t.obj, handler: t.handler, preds: t.preds, kind: f.s.kind}
	kctx, cancel := context.WithCancel(ctx)
	if err := ks.Prepare(kctx); err != nil {
		cancel()
		f.log.V(1).Info("Kind served, but its informer could not be had; asking again", "error", err.Error())
		return
	}
	if err := ks.Start(kctx, f.q); err != nil {
		cancel()
		f.log.Error(err, "Cannot watch the kind")
		return
	}
	act := &activation{ks: ks, cancel: cancel, crdName: crdName, uid: uid, synced: make(chan struct{})}
	go func() {
		if ks.WaitForSync(kctx) == nil {
			close(act.synced)
		}
	}()
	f.act = act
	f.s.waiting.Store(false)
	f.log.Info("Kind served; watching it", "crd", crdName)
}

// deactivate stops watching the kind, whose CRD is gone: the handler's
// registration ends, and the informer is removed from the cache before it
// lists or watches a resource that no longer exists.
func (f *follower) deactivate(ctx context.Context) {
	act := f.act
	f.act = nil
	f.s.waiting.Store(true)
	act.cancel()
	// Another source of the same kind may have removed it already (and
	// none can have started a new one: the new CRD is not served yet).
	if inf := act.ks.informer; inf != nil && !inf.IsStopped() {
		if err := f.s.tmpl.cache.RemoveInformer(ctx, f.s.tmpl.obj); err != nil && ctx.Err() == nil {
			f.log.Error(err, "Cannot stop the informer of a kind whose CRD was deleted")
		}
	}
	f.resetMapper()
	f.log.Info("CRD deleted; stopped watching the kind until it is served again", "crd", act.crdName)
}

// keeper removes from the cache the informer of a kind whose CRD is
// deleted between two runs of its source (a controller that lost its
// lease keeps its caches warm for the next term): without it the informer
// would list and watch a resource that no longer exists until the next
// run, logging errors and failing the cache's health. It is a handler on
// the CRD informer, removed by the next run; the removal of the kind's
// informer runs on a goroutine of its own, as a handler must not call
// back into the cache.
type keeper struct {
	s       *CRDSource
	inf     cache.Informer // the CRDs' informer
	crdName string
	uid     types.UID
	ks      *KindSource
	log     logr.Logger

	reg     toolscache.ResourceEventHandlerRegistration
	once    sync.Once
	removed chan struct{} // closed when the removal is done
	seen    atomic.Bool   // the CRD was in the informer's store when the keeper was added
}

// keep hands act's informer to a keeper until the next run.
func (s *CRDSource) keep(inf cache.Informer, act *activation, log logr.Logger) {
	k := &keeper{s: s, inf: inf, crdName: act.crdName, uid: act.uid, ks: act.ks, log: log, removed: make(chan struct{})}
	reg, err := inf.AddEventHandler(k)
	if err != nil {
		return // the CRD informer has stopped: so has the cache
	}
	k.reg = reg
	s.mu.Lock()
	s.keeper = k
	s.mu.Unlock()
	// The informer replays its store to a new handler: a CRD absent from
	// it went while no run followed it.
	if reg.HasSynced() && !k.seen.Load() {
		k.remove()
	}
}

// dropKeeper ends the keeper, waiting for a removal it started.
func (s *CRDSource) dropKeeper() {
	s.mu.Lock()
	k := s.keeper
	s.keeper = nil
	s.mu.Unlock()
	if k == nil {
		return
	}
	_ = k.inf.RemoveEventHandler(k.reg)
	k.once.Do(func() { close(k.removed) }) // no removal from now on
	<-k.removed
}

func (k *keeper) OnAdd(obj any, _ bool) { k.check(obj, false) }
func (k *keeper) OnUpdate(_, obj any)   { k.check(obj, false) }
func (k *keeper) OnDelete(obj any)      { k.check(obj, true) }

// check removes the informer when the CRD is gone or replaced.
func (k *keeper) check(obj any, gone bool) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj, gone = tomb.Obj, true
	}
	m, ok := obj.(metav1.Object)
	if !ok || m.GetName() != k.crdName {
		return
	}
	if !gone && m.GetUID() == k.uid {
		k.seen.Store(true)
		return
	}
	k.remove()
}

// remove removes the kind's informer from the cache, once, on its own
// goroutine.
func (k *keeper) remove() {
	k.once.Do(func() {
		go func() {
			defer close(k.removed)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if inf := k.ks.informer; inf != nil && !inf.IsStopped() {
				if err := k.s.tmpl.cache.RemoveInformer(ctx, k.s.tmpl.obj); err != nil {
					k.log.Error(err, "Cannot stop the informer of a kind whose CRD was deleted")
					return
				}
			}
			if r, ok := k.s.mapper.(meta.ResettableRESTMapper); ok {
				r.Reset()
			}
			k.log.Info("CRD deleted while the controller was not running; removed the kind's informer", "crd", k.crdName)
		}()
	})
}
