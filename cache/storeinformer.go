package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/cache/internal/store"
)

// storeInformer is the informer of one kind (in one namespace, or all).
// client-go's Reflector lists and watches, as in a SharedIndexInformer;
// what differs is everything after it. A SharedIndexInformer queues each
// change in a FIFO, pops it on a second goroutine, and hands it to one
// goroutine per handler through a growing buffer: three goroutine hops and
// about six allocations per event. storeInformer gives the Reflector a
// feed instead of a FIFO: the reflector's own goroutine transforms each
// change, applies it to the store and calls the handlers in line. The
// handlers the controllers add only enqueue a request, so nothing waits on
// them; a handler that blocks delays the watch, and its doc says so
// (Informer.AddEventHandler).
//
// A handler added after the store has objects first gets each of them as
// an add with isInInitialList true. Adding it, applying a change and
// calling the handlers all happen under one lock, so the handler sees
// every object exactly once before its first update or delete.
type storeInformer struct {
	store     *store.Store
	ctrl      toolscache.Controller
	feed      *feed
	transform storeTransform // nil: none

	mu       sync.Mutex // held while a change is applied and dispatched, and while handlers change
	handlers []*storeRegistration
	started  bool
	stopped  atomic.Bool
}

// storeInformerOptions configure a storeInformer.
type storeInformerOptions struct {
	description string         // the kind, for client-go's logs
	resync      time.Duration  // zero: none
	transform   storeTransform // nil: none; runs under the informer's lock
	onWatchErr  toolscache.WatchErrorHandlerWithContext
}

func newStoreInformer(lw toolscache.ListerWatcher, example runtime.Object, o storeInformerOptions) *storeInformer {
	s := &storeInformer{
		store:     store.New(),
		transform: o.transform,
	}
	s.feed = &feed{s: s, description: o.description, synced: make(chan struct{}), closed: make(chan struct{})}
	// client-go's controller runs the Reflector into the feed (and gives it
	// the watch error handler, which a bare Reflector does not take); its
	// processing loop only waits in feed.Pop until the feed is closed.
	s.ctrl = toolscache.New(&toolscache.Config{
		Queue:                        s.feed,
		ListerWatcher:                lw,
		ObjectType:                   example,
		ObjectDescription:            o.description,
		FullResyncPeriod:             o.resync,
		Process:                      func(any, bool) error { return nil },
		WatchErrorHandlerWithContext: o.onWatchErr,
	})
	return s
}

// RunWithContext lists, watches and applies changes until ctx ends.
func (s *storeInformer) RunWithContext(ctx context.Context) {
	s.mu.Lock()
	if s.started || s.stopped.Load() {
		s.mu.Unlock()
		return
	}
	s.started = true
	s.mu.Unlock()
	defer s.stopped.Store(true)
	s.ctrl.RunWithContext(ctx)
}

// upsert transforms obj, stores it and calls the handlers: an update if a
// version of it is stored, else an add. The stored version is looked up
// once, for both the transform and the handlers. The caller holds s.mu.
func (s *storeInformer) upsert(obj any, isInInitialList bool) error {
	k, err := keyOf(obj)
	if err != nil {
		return err
	}
	old, exists := s.store.Get(k.Namespace, k.Name)
	if obj, err = s.transformed(k, obj, old); err != nil {
		return err
	}
	if err := s.store.Put(k, obj); err != nil {
		return err
	}
	if exists {
		for _, r := range s.handlers {
			r.handler.OnUpdate(old, obj)
		}
		return nil
	}
	for _, r := range s.handlers {
		r.handler.OnAdd(obj, isInInitialList)
	}
	return nil
}

// remove deletes obj (which may be a DeletedFinalStateUnknown, which is
// not transformed) and calls the handlers. The caller holds s.mu.
func (s *storeInformer) remove(obj any) error {
	k, err := keyOf(obj)
	if err != nil {
		return err
	}
	if _, tombstone := obj.(toolscache.DeletedFinalStateUnknown); !tombstone {
		old, _ := s.store.Get(k.Namespace, k.Name)
		if obj, err = s.transformed(k, obj, old); err != nil {
			return err
		}
	}
	if err := s.store.Delete(k); err != nil {
		return err
	}
	for _, r := range s.handlers {
		r.handler.OnDelete(obj)
	}
	return nil
}

// transformed returns obj, keyed k, after the transform; prev is the
// version stored under k, nil if none. A transform must not rename the
// object.
func (s *storeInformer) transformed(k store.Key, obj, prev any) (any, error) {
	if s.transform == nil {
		return obj, nil
	}
	out, err := s.transform(obj, prev)
	if err != nil {
		return nil, err
	}
	if k2, err := keyOf(out); err != nil || k2 != k {
		return nil, fmt.Errorf("transform of %s returned %T named %s", k, out, k2)
	}
	return out, nil
}

// feed is what the Reflector writes into: a toolscache.Queue with nothing
// queued. Each change is transformed, applied to the store and dispatched
// on the caller's goroutine, as client-go's informers would once they had
// popped it: an object already stored is an update, else an add; a
// deletion may carry DeletedFinalStateUnknown; a relist deletes what it no
// longer holds. The Reflector makes every call but Resync from one
// goroutine; Resync comes from another, hence s.mu.
type feed struct {
	s           *storeInformer
	description string

	synced     chan struct{} // closed once the first list has been applied; under s.mu
	syncedOnce bool          // under s.mu
	closed     chan struct{}
	closeOnce  sync.Once
	progress   progress // see progress.go
}

var _ toolscache.Queue = (*feed)(nil)

// Add applies an added object.
func (f *feed) Add(obj any) error { return f.upsert(obj) }

// Update applies a modified object.
func (f *feed) Update(obj any) error { return f.upsert(obj) }

func (f *feed) upsert(obj any) error {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	err := f.s.upsert(obj, !f.syncedOnce)
	f.markSynced()
	return err
}

// Delete applies a deletion.
func (f *feed) Delete(obj any) error {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	err := f.s.remove(obj)
	f.markSynced()
	return err
}

// Replace applies a (re)list: every stored object the list no longer holds
// is deleted, as a DeletedFinalStateUnknown, then every listed object is
// added or updated. The first list's adds are in the initial list.
func (f *feed) Replace(list []any, rv string) error {
	defer f.progress.advance(rv)
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	var errs []error
	if f.s.store.Len() > 0 {
		listed := make(map[store.Key]struct{}, len(list))
		for _, obj := range list {
			k, err := keyOf(obj)
			if err != nil {
				return err
			}
			listed[k] = struct{}{}
		}
		var gone []toolscache.DeletedFinalStateUnknown
		f.s.store.Each("", func(k store.Key, obj any) bool {
			if _, ok := listed[k]; !ok {
				gone = append(gone, toolscache.DeletedFinalStateUnknown{Key: k.String(), Obj: obj})
			}
			return true
		})
		for _, d := range gone {
			if err := f.s.remove(d); err != nil {
				errs = append(errs, err)
			}
		}
	}
	initial := !f.syncedOnce
	for _, obj := range list {
		if err := f.s.upsert(obj, initial); err != nil {
			errs = append(errs, err)
		}
	}
	f.markSynced()
	return errors.Join(errs...)
}

// Resync hands every stored object to the handlers as an update from
// itself.
func (f *feed) Resync() error {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if len(f.s.handlers) == 0 {
		return nil
	}
	for _, obj := range objects(f.s.store) {
		for _, r := range f.s.handlers {
			r.handler.OnUpdate(obj, obj)
		}
	}
	return nil
}

// markSynced records that the first change has been applied. The
// Reflector's first call is the initial list's Replace. The caller holds
// s.mu.
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

// AddEventHandler adds handler: it gets every stored object as an add
// (isInInitialList true), then every change.
func (s *storeInformer) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	if handler == nil {
		return nil, errors.New("cache: AddEventHandler: nil handler")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped.Load() {
		return nil, errors.New("cache: AddEventHandler: the informer has stopped")
	}
	for _, obj := range objects(s.store) {
		handler.OnAdd(obj, true)
	}
	r := &storeRegistration{handler: handler, informer: s}
	s.handlers = append(slices.Clip(s.handlers), r)
	return r, nil
}

// RemoveEventHandler removes a handler added with AddEventHandler;
// removing it twice is not an error.
func (s *storeInformer) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*storeRegistration)
	if !ok || r.informer != s {
		return fmt.Errorf("cache: RemoveEventHandler: handle %T was not returned by this informer", handle)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers = slices.DeleteFunc(slices.Clone(s.handlers), func(h *storeRegistration) bool { return h == r })
	return nil
}

// AddIndexers adds indexes, indexing the objects already stored.
func (s *storeInformer) AddIndexers(indexers toolscache.Indexers) error {
	if s.stopped.Load() {
		return errors.New("cache: AddIndexers: the informer has stopped")
	}
	fns := make(map[string]store.IndexFunc, len(indexers))
	for name, fn := range indexers {
		fns[name] = store.IndexFunc(fn)
	}
	return s.store.AddIndexes(fns)
}

// HasSynced reports whether the initial list has been applied and
// dispatched.
func (s *storeInformer) HasSynced() bool { return s.feed.HasSynced() }

// HasSyncedChecker returns a checker whose channel closes once HasSynced
// is true.
func (s *storeInformer) HasSyncedChecker() toolscache.DoneChecker { return s.feed.HasSyncedChecker() }

// IsStopped reports whether the informer has stopped.
func (s *storeInformer) IsStopped() bool { return s.stopped.Load() }

// storeRegistration is a handler added to a storeInformer. Handlers are
// called in line, so a handler has seen the initial list once the informer
// has synced (or, when added later, once AddEventHandler returned).
type storeRegistration struct {
	handler  toolscache.ResourceEventHandler
	informer *storeInformer
}

// HasSynced reports whether the handler has seen the initial list.
func (r *storeRegistration) HasSynced() bool { return r.informer.HasSynced() }

// HasSyncedChecker returns a checker whose channel closes once HasSynced
// is true.
func (r *storeRegistration) HasSyncedChecker() toolscache.DoneChecker {
	return r.informer.HasSyncedChecker()
}

// objects returns every object of st, for handlers to be called outside
// its lock (a handler may read the cache).
func objects(st *store.Store) []any {
	out := make([]any, 0, st.Len())
	st.Each("", func(_ store.Key, obj any) bool {
		out = append(out, obj)
		return true
	})
	return out
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
