package fanout

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// History is how many changes a Hub keeps for watches that start at a
// resourceVersion (a List's, typically).
const History = 1024

// Change is one write to the store.
type Change struct {
	GK  schema.GroupKind
	Key types.NamespacedName
	Old map[string]any // nil for a create; never modified
	Cur map[string]any // nil for a delete; never modified
	RV  uint64         // the resourceVersion the write made
}

// View is what one watch sees of the store; the fake implements it for
// the watch's kind, selection and list type.
type View interface {
	// Selects reports whether m, the object at key (nil for none), is in
	// the watch's selection.
	Selects(key types.NamespacedName, m map[string]any) bool
	// Object converts m to the object an event carries.
	Object(m map[string]any) (runtime.Object, error)
}

// Hub fans changes out to watchers and keeps the last History changes.
// Its zero value is ready.
type Hub struct {
	mu       sync.Mutex
	watchers map[*Watcher]struct{}
	history  []Change
}

// Publish records ch and hands it to every watcher.
func (h *Hub) Publish(ch Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.history) == History {
		h.history = append(h.history[:0:0], h.history[1:]...)
	}
	h.history = append(h.history, ch)
	for w := range h.watchers {
		w.observe(ch)
	}
}

// Watch starts a watch of gk through v that first sends an ADDED event
// for each of existing, then every change published after.
func (h *Hub) Watch(ctx context.Context, gk schema.GroupKind, v View, existing []map[string]any) *Watcher {
	w := newWatcher(h, gk, v)
	for _, m := range existing {
		w.enqueue(watch.Added, m)
	}
	h.start(ctx, w)
	return w
}

// WatchFrom starts a watch of gk through v that sends the changes after
// resourceVersion from, then every change published after; current is the
// store's resourceVersion now. It answers 410 Gone when the history no
// longer reaches back to from.
func (h *Hub) WatchFrom(ctx context.Context, gk schema.GroupKind, v View, from, current uint64) (*Watcher, error) {
	w := newWatcher(h, gk, v)
	h.mu.Lock()
	if from < current && (len(h.history) == 0 || h.history[0].RV > from+1) {
		h.mu.Unlock()
		return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (the fake keeps the last %d writes)", from, History))
	}
	for _, ch := range h.history {
		if ch.RV > from {
			w.observe(ch)
		}
	}
	h.mu.Unlock()
	h.start(ctx, w)
	return w, nil
}

func (h *Hub) start(ctx context.Context, w *Watcher) {
	h.mu.Lock()
	if h.watchers == nil {
		h.watchers = map[*Watcher]struct{}{}
	}
	h.watchers[w] = struct{}{}
	h.mu.Unlock()
	go w.run(ctx)
}

func (h *Hub) remove(w *Watcher) {
	h.mu.Lock()
	delete(h.watchers, w)
	h.mu.Unlock()
}

// Watcher is one watch. Its queue is unbounded, so that Publish never
// waits for a reader.
type Watcher struct {
	hub  *Hub
	gk   schema.GroupKind
	view View

	out      chan watch.Event
	wake     chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	mu    sync.Mutex
	queue []watch.Event
}

var _ watch.Interface = (*Watcher)(nil)

func newWatcher(h *Hub, gk schema.GroupKind, v View) *Watcher {
	return &Watcher{hub: h, gk: gk, view: v, out: make(chan watch.Event), wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// ResultChan returns the events; it is closed after Stop or the end of
// the context.
func (w *Watcher) ResultChan() <-chan watch.Event { return w.out }

// Stop ends the watch. It may be called more than once.
func (w *Watcher) Stop() {
	w.stopOnce.Do(func() {
		w.hub.remove(w)
		close(w.done)
	})
}

// observe turns a change into the event this watch sees, if any.
func (w *Watcher) observe(ch Change) {
	if ch.GK != w.gk {
		return
	}
	was, is := ch.Old != nil && w.view.Selects(ch.Key, ch.Old), ch.Cur != nil && w.view.Selects(ch.Key, ch.Cur)
	switch {
	case was && is:
		w.enqueue(watch.Modified, ch.Cur)
	case is:
		w.enqueue(watch.Added, ch.Cur)
	case was && ch.Cur != nil:
		w.enqueue(watch.Deleted, ch.Cur) // modified out of the selection
	case was:
		w.enqueue(watch.Deleted, ch.Old)
	}
}

// enqueue converts m and queues the event; a conversion error is queued
// as an Error event.
func (w *Watcher) enqueue(t watch.EventType, m map[string]any) {
	ev := watch.Event{Type: t}
	obj, err := w.view.Object(m)
	if err != nil {
		ev = watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus}
	} else {
		ev.Object = obj
	}
	w.mu.Lock()
	w.queue = append(w.queue, ev)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// run delivers the queue until Stop or the end of ctx, then closes the
// result channel.
func (w *Watcher) run(ctx context.Context) {
	defer close(w.out)
	defer w.Stop()
	for {
		w.mu.Lock()
		var ev watch.Event
		have := len(w.queue) > 0
		if have {
			ev = w.queue[0]
			w.queue = w.queue[1:]
		}
		w.mu.Unlock()
		if !have {
			select {
			case <-w.wake:
				continue
			case <-w.done:
				return
			case <-ctx.Done():
				return
			}
		}
		select {
		case w.out <- ev:
		case <-w.done:
			return
		case <-ctx.Done():
			return
		}
	}
}
