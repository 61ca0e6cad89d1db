package fanout

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

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
