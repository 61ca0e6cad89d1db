package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
)

// storeInformer is the informer of one kind (in one namespace, or all).
// client-go's Reflector lists and watches into a RealFIFO, as in a
// SharedIndexInformer; what differs is the last step. A SharedIndexInformer
// hands every change to one goroutine per handler through a growing buffer
// (two goroutine hops and about six allocations per event); storeInformer
// calls the handlers in line, on the goroutine that has just applied the
// change to the store. The handlers the controllers add only enqueue a
// request, so nothing waits on them; a handler that blocks delays the
// store, and its doc says so (Informer.AddEventHandler).
//
// A handler added after the store has objects first gets each of them as
// an add with isInInitialList true. Adding it, applying a change and
// calling the handlers all happen under one lock, so the handler sees
// every object exactly once before its first update or delete.
type storeInformer struct {
	indexer toolscache.Indexer
	ctrl    toolscache.Controller

	mu       sync.Mutex // held while a change is applied and dispatched, and while handlers change
	handlers []*storeRegistration
	started  bool
	stopped  atomic.Bool
}

// storeInformerOptions configure a storeInformer.
type storeInformerOptions struct {
	description string                   // the kind, for client-go's logs
	resync      time.Duration            // zero: none
	transform   toolscache.TransformFunc // nil: none
	indexers    toolscache.Indexers
	onWatchErr  toolscache.WatchErrorHandlerWithContext
}

func newStoreInformer(lw toolscache.ListerWatcher, example runtime.Object, o storeInformerOptions) *storeInformer {
	if o.indexers == nil {
		o.indexers = toolscache.Indexers{} // client-go's index panics on a later AddIndexers otherwise
	}
	s := &storeInformer{indexer: toolscache.NewIndexer(toolscache.DeletionHandlingMetaNamespaceKeyFunc, o.indexers)}
	fifo := toolscache.NewRealFIFOWithOptions(toolscache.RealFIFOOptions{
		Name:         "cache " + o.description,
		KeyFunction:  toolscache.MetaNamespaceKeyFunc,
		KnownObjects: s.indexer,
		Transformer:  o.transform,
	})
	s.ctrl = toolscache.New(&toolscache.Config{
		Queue:             fifo,
		ListerWatcher:     lw,
		ObjectType:        example,
		ObjectDescription: o.description,
		FullResyncPeriod:  o.resync,
		Process: func(obj any, isInInitialList bool) error {
			deltas, ok := obj.(toolscache.Deltas)
			if !ok {
				return fmt.Errorf("cache: %s: FIFO handed out %T, not deltas", o.description, obj)
			}
			return s.apply(deltas, isInInitialList)
		},
		ProcessBatch:                 s.apply,
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

// apply applies deltas to the store, oldest first, and calls the handlers
// for each, as client-go's informers do: an object already stored is an
// update, else an add; a deletion may carry DeletedFinalStateUnknown.
func (s *storeInformer) apply(deltas []toolscache.Delta, isInInitialList bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, d := range deltas {
		obj := d.Object
		switch d.Type {
		case toolscache.Sync, toolscache.Replaced, toolscache.Added, toolscache.Updated:
			old, exists, err := s.indexer.Get(obj)
			if err == nil && exists {
				if err := s.indexer.Update(obj); err != nil {
					errs = append(errs, err)
					continue
				}
				for _, r := range s.handlers {
					r.handler.OnUpdate(old, obj)
				}
				continue
			}
			if err := s.indexer.Add(obj); err != nil {
				errs = append(errs, err)
				continue
			}
			for _, r := range s.handlers {
				r.handler.OnAdd(obj, isInInitialList)
			}
		case toolscache.Deleted:
			if err := s.indexer.Delete(obj); err != nil {
				errs = append(errs, err)
				continue
			}
			for _, r := range s.handlers {
				r.handler.OnDelete(obj)
			}
		}
	}
	return errors.Join(errs...)
}

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
	for _, obj := range s.indexer.List() {
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
	return s.indexer.AddIndexers(indexers)
}

// stored returns the stored version of obj, nil if none. Changes still
// queued may make it older than obj's latest predecessor; the transform
// only reuses its values when they are equal, so that does not matter.
func (s *storeInformer) stored(obj any) any {
	prev, exists, err := s.indexer.Get(obj) // keyed as the store keys it
	if err != nil || !exists {
		return nil
	}
	return prev
}

// GetIndexer returns the store.
func (s *storeInformer) GetIndexer() toolscache.Indexer { return s.indexer }

// HasSynced reports whether the initial list has been applied and
// dispatched.
func (s *storeInformer) HasSynced() bool { return s.ctrl.HasSynced() }

// HasSyncedChecker returns a checker whose channel closes once HasSynced
// is true.
func (s *storeInformer) HasSyncedChecker() toolscache.DoneChecker { return s.ctrl.HasSyncedChecker() }

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
