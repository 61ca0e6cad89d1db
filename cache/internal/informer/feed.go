package informer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/cache/internal/store"
	"github.com/kubeloop/kubeloop/internal/probe"
)

// feed is what the reflector writes into (the informer's own, or
// client-go's for a streaming list): a toolscache.Queue with nothing
// queued. Each change is transformed, applied to the store and dispatched
// on the caller's goroutine, as client-go's informers would once they had
// popped it: an object already stored is an update, else an add; a
// deletion may carry DeletedFinalStateUnknown; a relist deletes what it no
// longer holds. A handler that is a catchUpHandler is told which changes
// are catch-up: found by a relist (not the first list), or replayed by a
// watch resumed after an outage (see reflector.catchUpTo). The reflector
// makes every
// call but Resync from one goroutine; Resync comes from another, hence mu.
// The feed owns the store and the handlers; the Informer runs the
// reflector that writes into it.
type feed struct {
	description string
	store       *store.Store
	transform   Transform // nil: none

	mu       sync.Mutex // held while a change is applied and dispatched, and while handlers change
	handlers []*registration

	synced     chan struct{} // closed once the first list has been applied; under mu
	syncedOnce bool          // under mu
	closed     chan struct{}
	closeOnce  sync.Once
	progress   progress // see progress.go
}

var _ toolscache.Queue = (*feed)(nil)

// Transform is the transform of one kind: obj is the object about to be
// stored, prev the one stored under its key (nil if none).
type Transform func(obj, prev any) (any, error)

// Add applies an added object.
func (f *feed) Add(obj any) error { return f.upsert(obj, fromWatch) }

// Update applies a modified object.
func (f *feed) Update(obj any) error { return f.upsert(obj, fromWatch) }

// CatchUp applies a watch event that a watch resumed after an outage
// replayed (deleted: a Deleted event, else an Added or Modified one): the
// handlers are told it is catch-up.
func (f *feed) CatchUp(obj any, deleted bool) error {
	if deleted {
		return f.delete(obj, fromCatchUp)
	}
	return f.upsert(obj, fromCatchUp)
}

func (f *feed) upsert(obj any, from origin) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.syncedOnce {
		from = fromInitialList
	}
	err := f.apply(obj, from)
	f.markSynced()
	return err
}

// Delete applies a deletion.
func (f *feed) Delete(obj any) error { return f.delete(obj, fromWatch) }

func (f *feed) delete(obj any, from origin) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.remove(obj, from)
	f.markSynced()
	return err
}

// Replace applies a (re)list: every stored object the list no longer holds
// is deleted, as a DeletedFinalStateUnknown, then every listed object is
// added or updated. The first list's adds are in the initial list; a
// later list's changes (its deletions too) are catch-up.
func (f *feed) Replace(list []any, rv string) error {
	defer f.progress.advance(rv)
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	if f.store.Len() > 0 {
		listed := make(map[store.Key]struct{}, len(list))
		for _, obj := range list {
			k, err := keyOf(obj)
			if err != nil {
				return err
			}
			listed[k] = struct{}{}
		}
		var gone []toolscache.DeletedFinalStateUnknown
		f.store.Each("", func(k store.Key, obj any) bool {
			if _, ok := listed[k]; !ok {
				gone = append(gone, toolscache.DeletedFinalStateUnknown{Key: k.String(), Obj: obj})
			}
			return true
		})
		for _, d := range gone {
			if err := f.remove(d, fromCatchUp); err != nil {
				errs = append(errs, err)
			}
		}
	}
	origin := fromCatchUp
	if !f.syncedOnce {
		origin = fromInitialList
	}
	for _, obj := range list {
		if err := f.apply(obj, origin); err != nil {
			errs = append(errs, err)
		}
	}
	f.markSynced()
	return errors.Join(errs...)
}

// Resync hands every stored object to the handlers as an update from
// itself.
func (f *feed) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.handlers) == 0 {
		return nil
	}
	// A copy (store.Objects), for handlers to be called outside the
	// store's lock (a handler may read the cache).
	for _, obj := range f.store.Objects() {
		for _, r := range f.handlers {
			r.handler.OnUpdate(obj, obj)
		}
	}
	return nil
}

// markSynced records that the first change has been applied. The
// Reflector's first call is the initial list's Replace. The caller holds
// f.mu.
func (f *feed) markSynced() {
	if !f.syncedOnce {
		f.syncedOnce = true
		close(f.synced)
	}
}

// Pop has nothing to hand out: it waits for Close.
func (f *feed) Pop(toolscache.PopProcessFunc) (any, error) {
	<-f.closed
	return nil, toolscache.ErrFIFOClosed
}

// HasSynced reports whether the initial list has been applied and
// dispatched.
func (f *feed) HasSynced() bool {
	select {
	case <-f.synced:
		return true
	default:
		return false
	}
}

// HasSyncedChecker returns a checker whose channel closes once HasSynced
// is true.
func (f *feed) HasSyncedChecker() toolscache.DoneChecker { return syncedChecker{f} }

// Close ends Pop; the controller calls it when its context ends.
func (f *feed) Close() { f.closeOnce.Do(func() { close(f.closed) }) }

// syncedChecker is a feed's toolscache.DoneChecker.
type syncedChecker struct{ f *feed }

func (c syncedChecker) Name() string          { return "cache " + c.f.description }
func (c syncedChecker) Done() <-chan struct{} { return c.f.synced }

// progress is the resourceVersion (an etcd revision) up to which a feed has
// applied every change of its list-watch: the list's on a (re)list, then
// each event's and bookmark's, as the Reflector reports them. It only
// grows. A change with a higher version may already be applied; none with
// a lower or equal one is missing. Readers may wait for it to pass a
// version (wait); an advance wakes them, and costs one atomic load more
// when nobody waits.
type progress struct {
	rv      atomic.Uint64
	waiting atomic.Int32 // goroutines in wait
	mu      sync.Mutex
	wake    chan struct{} // closed by the next advance; nil when nobody registered
}

// advance records that every change up to rv has been applied. A version
// that is not an unsigned integer is ignored.
func (p *progress) advance(rv string) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return
	}
	for {
		old := p.rv.Load()
		if n <= old {
			return
		}
		if p.rv.CompareAndSwap(old, n) {
			break
		}
	}
	if p.waiting.Load() > 0 {
		p.mu.Lock()
		if p.wake != nil {
			close(p.wake)
			p.wake = nil
		}
		p.mu.Unlock()
	}
}

// wait blocks until the feed's version is at least want, and reports
// whether it got there before ctx ended. A waiter registers before it
// looks at the version again, and advance looks for waiters after it
// stored the version, so no advance is missed between the two.
func (p *progress) wait(ctx context.Context, want uint64) bool {
	for p.rv.Load() < want {
		p.waiting.Add(1)
		p.mu.Lock()
		if p.wake == nil {
			p.wake = make(chan struct{})
		}
		ch := p.wake
		p.mu.Unlock()
		if p.rv.Load() >= want {
			p.waiting.Add(-1)
			return true
		}
		select {
		case <-ch:
			p.waiting.Add(-1)
		case <-ctx.Done():
			p.waiting.Add(-1)
			return p.rv.Load() >= want
		}
	}
	return true
}

// UpdateResourceVersion is called by the Reflector after each watch event
// and bookmark has been applied (client-go's ResourceVersionUpdater).
func (f *feed) UpdateResourceVersion(rv string) { f.progress.advance(rv) }

// origin is where a change the feed applies comes from.
type origin uint8

const (
	fromWatch       origin = iota // a watch event
	fromInitialList               // the first list
	fromCatchUp                   // a later list, or a watch's replay after an outage
)

// catchUpHandler is a handler that wants to know which changes are
// catch-up rather than news: what a relist found (after a watch failed)
// and what a watch resumed after an outage replayed, up to the server's
// resourceVersion when the informer reached it again. A controller's
// source is one: it queues them at low priority, behind fresh watch
// events (handler.CreateEvent's, UpdateEvent's and DeleteEvent's
// CatchUp). For a catch-up change the feed calls OnCatchUpAdd, OnCatchUpUpdate
// or OnCatchUpDelete instead of OnAdd, OnUpdate or OnDelete; a deletion a
// relist found is a DeletedFinalStateUnknown, as for every handler.
type catchUpHandler interface {
	OnCatchUpAdd(obj any)
	OnCatchUpUpdate(oldObj, newObj any)
	OnCatchUpDelete(obj any)
}

// apply transforms obj, stores it and calls the handlers: an update if a
// version of it is stored, else an add. The stored version is looked up
// once, for both the transform and the handlers. The caller holds f.mu.
func (f *feed) apply(obj any, from origin) error {
	k, err := keyOf(obj)
	if err != nil {
		return err
	}
	old, exists := f.store.Stored(k.Namespace, k.Name)
	probe.Mark(probe.Looked)
	if obj, err = f.transformed(k, obj, old); err != nil {
		return err
	}
	probe.Mark(probe.Transformed)
	if err := f.store.Put(k, obj); err != nil {
		return err
	}
	probe.Mark(probe.Stored)
	if exists {
		for _, r := range f.handlers {
			if from == fromCatchUp && r.catchUp != nil {
				r.catchUp.OnCatchUpUpdate(old, obj)
				continue
			}
			r.handler.OnUpdate(old, obj)
		}
		probe.Mark(probe.Handled)
		return nil
	}
	for _, r := range f.handlers {
		if from == fromCatchUp && r.catchUp != nil {
			r.catchUp.OnCatchUpAdd(obj)
			continue
		}
		r.handler.OnAdd(obj, from == fromInitialList)
	}
	return nil
}

// remove deletes obj (which may be a DeletedFinalStateUnknown, which is
// not transformed) and calls the handlers. The caller holds f.mu.
func (f *feed) remove(obj any, from origin) error {
	k, err := keyOf(obj)
	if err != nil {
		return err
	}
	if _, tombstone := obj.(toolscache.DeletedFinalStateUnknown); !tombstone {
		old, _ := f.store.Get(k.Namespace, k.Name)
		if obj, err = f.transformed(k, obj, old); err != nil {
			return err
		}
	}
	if err := f.store.Delete(k); err != nil {
		return err
	}
	for _, r := range f.handlers {
		if from == fromCatchUp && r.catchUp != nil {
			r.catchUp.OnCatchUpDelete(obj)
			continue
		}
		r.handler.OnDelete(obj)
	}
	return nil
}

// transformed returns obj, keyed k, after the transform; prev is the
// version stored under k, nil if none. A transform must not rename the
// object.
func (f *feed) transformed(k store.Key, obj, prev any) (any, error) {
	if f.transform == nil {
		return obj, nil
	}
	out, err := f.transform(obj, prev)
	if err != nil {
		return nil, err
	}
	if k2, err := keyOf(out); err != nil || k2 != k {
		return nil, fmt.Errorf("transform of %s returned %T named %s", k, out, k2)
	}
	return out, nil
}

// keyOf returns the key of obj, which may be a DeletedFinalStateUnknown.
func keyOf(obj any) (store.Key, error) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		return parseKey(d.Key)
	}
	return store.KeyOf(obj)
}

// parseKey parses a key in client-go's form, as
// toolscache.SplitMetaNamespaceKey does but without allocating.
func parseKey(key string) (store.Key, error) {
	ns, name, found := strings.Cut(key, "/")
	if !found {
		return store.Key{Name: key}, nil
	}
	if strings.Contains(name, "/") {
		return store.Key{}, fmt.Errorf("cache: unexpected key format: %q", key)
	}
	return store.Key{Namespace: ns, Name: name}, nil
}

// registration is a handler added to an Informer. Handlers are
// called in line, so a handler has seen the initial list once the informer
// has synced (or, when added later, once AddEventHandler returned).
type registration struct {
	handler toolscache.ResourceEventHandler
	catchUp catchUpHandler // handler, if it is one; else nil
	feed    *feed
}

// HasSynced reports whether the handler has seen the initial list.
func (r *registration) HasSynced() bool { return r.feed.HasSynced() }

// HasSyncedChecker returns a checker whose channel closes once HasSynced
// is true.
func (r *registration) HasSyncedChecker() toolscache.DoneChecker {
	return r.feed.HasSyncedChecker()
}
