package informer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubeloop/kubeloop/cache/internal/backoff"
	"github.com/kubeloop/kubeloop/cache/internal/health"
	"github.com/kubeloop/kubeloop/cache/internal/store"
	"github.com/kubeloop/kubeloop/workqueue"
)

// Informer is the informer of one kind (in one namespace, or all). Its
// reflector (reflector.go) lists and watches as client-go's Reflector
// does; what differs is everything after the bytes are read. client-go's
// watch decodes each event on a goroutine of its own and hands it to the
// Reflector's, and a SharedIndexInformer queues it in a FIFO, pops it on a
// third goroutine, and hands it to one goroutine per handler through a
// growing buffer: four goroutine hops and about six allocations per event.
// Informer's reflector reads a built-in kind's watch in line
// (wire.Events) and writes into a feed instead of a FIFO: one goroutine
// decodes each change, transforms it, applies it to the store and calls
// the handlers. The handlers the controllers add only enqueue a request,
// so nothing waits on them; a handler that blocks delays the watch, and
// its doc says so (Informer.AddEventHandler). With StreamingList,
// client-go's Reflector runs the list-watch into the same feed.
//
// A handler added after the store has objects first gets each of them as
// an add with isInInitialList true. Adding it, applying a change and
// calling the handlers all happen under one lock, so the handler sees
// every object exactly once before its first update or delete. A handler
// with OnCatchUpAdd, OnCatchUpUpdate and OnCatchUpDelete methods
// (catchUpHandler, feed.go) is told which changes are the catch-up after
// an outage (a relist's, or a resumed watch's replay), so that it can
// queue them behind fresh watch events.
//
// The informer runs the list-and-watch cycles itself, with the
// reflector's own backoff a constant 10 ms, and paces every list and watch
// call through a backoff.Gate: the retry policy is kubeloop's (see package
// backoff), not client-go's. Every part of an informer is named in its
// Pipeline (pipeline.go).
type Informer struct {
	feed  *feed                    // the store and the handlers
	lw    toolscache.ListerWatcher // p.ListWatch through Health and the gate
	probe toolscache.ListerWatcher // p.ListWatch through Health, without the gate
	gate  *backoff.Gate
	p     Pipeline

	started bool // under feed.mu
	stopped atomic.Bool
}

// reflectorDelay is the Reflector's own wait before it retries a watch
// that failed with connection refused or 429: the gate does the waiting.
const reflectorDelay = 10 * time.Millisecond

// New returns the informer that p describes. It makes the parts p does
// not name: the store, the progress, the gate, and the wrapping of
// p.ListWatch that reports to p.Health.
func New(p Pipeline) *Informer {
	s := &Informer{
		feed: &feed{description: p.Description, store: store.New(), transform: p.Transform,
			synced: make(chan struct{}), closed: make(chan struct{})},
		p: p,
	}
	if p.DetectMutations {
		s.feed.store.DetectMutations(p.OnMutation)
	}
	lw := p.ListWatch
	if p.Health != nil {
		lw = health.Track(lw, p.Health, p.StreamingList)
	}
	s.gate = backoff.NewGate(p.Backoff, p.Prober, s.feed.progress.rv.Load)
	s.lw = backoff.Wrap(lw, s.gate)
	s.probe = lw
	return s
}

// RunWithContext lists, watches and applies changes until ctx ends. It
// runs the Reflector's cycles as client-go's controller would, with the
// waits between them left to the gate.
func (s *Informer) RunWithContext(ctx context.Context) {
	s.feed.mu.Lock()
	if s.started || s.stopped.Load() {
		s.feed.mu.Unlock()
		return
	}
	s.started = true
	s.feed.mu.Unlock()
	defer s.stopped.Store(true)
	defer s.feed.Close()
	if s.p.StoreView != nil {
		defer s.p.StoreView.Attach(s.feed.store.Get)()
	}
	if s.p.DetectMutations {
		defer s.checkMutations(ctx)()
	}
	listAndWatch := newReflector(s.lw, s.probe, s.feed, s.p).listAndWatch
	logger := klog.FromContext(ctx)
	if s.p.StreamingList {
		r := toolscache.NewReflectorWithOptions(s.lw, s.p.Example, s.feed, toolscache.ReflectorOptions{
			Logger:          &logger,
			Name:            s.p.Description,
			TypeDescription: s.p.Description,
			ResyncPeriod:    s.p.Resync,
			Backoff:         &wait.Backoff{Duration: reflectorDelay},
		})
		listAndWatch = r.ListAndWatchWithContext
	}
	onErr := s.p.OnWatchErr
	switch {
	case onErr != nil:
	case s.p.Health != nil:
		onErr = s.p.Health.ReflectorFailed
	default:
		onErr = func(ctx context.Context, err error) {
			logger.Error(err, "Failed to watch", "type", s.p.Description)
		}
	}
	for ctx.Err() == nil {
		err := listAndWatch(ctx)
		if err != nil {
			onErr(ctx, err)
		}
		s.gate.Ended(ctx, err)
	}
}

// checkMutations checks the store for mutations every MutationPeriod
// until ctx ends or the returned func is called; the func waits for the
// checking goroutine.
func (s *Informer) checkMutations(ctx context.Context) (stop func()) {
	period := s.p.MutationPeriod
	if period <= 0 {
		period = time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = s.feed.store.CheckMutations() // reported to OnMutation
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Failures returns how many list or watch attempts in a row have failed.
func (s *Informer) Failures() int { return s.gate.Failures() }

// AddEventHandler adds handler: it gets every stored object as an add
// (isInInitialList true), then every change.
func (s *Informer) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	if handler == nil {
		return nil, errors.New("cache: AddEventHandler: nil handler")
	}
	f := s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	if s.stopped.Load() {
		return nil, errors.New("cache: AddEventHandler: the informer has stopped")
	}
	// A copy in memory order (store.Objects), for the handler to be
	// called outside the store's lock (a handler may read the cache).
	objs := f.store.Objects()
	if e, ok := handler.(workqueue.Expecter); ok {
		e.Expect(len(objs))
	}
	for _, obj := range objs {
		handler.OnAdd(obj, true)
	}
	r := &registration{handler: handler, feed: f}
	r.catchUp, _ = handler.(catchUpHandler)
	f.handlers = append(slices.Clip(f.handlers), r)
	return r, nil
}

// RemoveEventHandler removes a handler added with AddEventHandler;
// removing it twice is not an error.
func (s *Informer) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	r, ok := handle.(*registration)
	if !ok || r.feed != s.feed {
		return fmt.Errorf("cache: RemoveEventHandler: handle %T was not returned by this informer", handle)
	}
	f := s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers = slices.DeleteFunc(slices.Clone(f.handlers), func(h *registration) bool { return h == r })
	return nil
}

// AddIndexers adds indexes, indexing the objects already stored.
func (s *Informer) AddIndexers(indexers toolscache.Indexers) error {
	if s.stopped.Load() {
		return errors.New("cache: AddIndexers: the informer has stopped")
	}
	fns := make(map[string]store.IndexFunc, len(indexers))
	for name, fn := range indexers {
		fns[name] = store.IndexFunc(fn)
	}
	return s.feed.store.AddIndexes(fns)
}

// HasSynced reports whether the initial list has been applied and
// dispatched.
func (s *Informer) HasSynced() bool { return s.feed.HasSynced() }

// HasSyncedChecker returns a checker whose channel closes once HasSynced
// is true.
func (s *Informer) HasSyncedChecker() toolscache.DoneChecker { return s.feed.HasSyncedChecker() }

// ObservedVersion returns the resourceVersion up to which the informer has
// applied every change of its list-watch (see progress).
func (s *Informer) ObservedVersion() uint64 { return s.feed.progress.rv.Load() }

// WaitForVersion blocks until ObservedVersion is at least rv, and reports
// whether it got there before ctx ended.
func (s *Informer) WaitForVersion(ctx context.Context, rv uint64) bool {
	return s.feed.progress.wait(ctx, rv)
}

// Store returns the informer's store, for the cache's reads.
func (s *Informer) Store() *store.Store { return s.feed.store }

// IsStopped reports whether the informer has stopped.
func (s *Informer) IsStopped() bool { return s.stopped.Load() }
