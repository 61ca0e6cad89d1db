package source

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

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
	ks := &KindSource{cache: t.cache, obj: t.obj, handler: t.handler, preds: t.preds, kind: t.kind}
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
