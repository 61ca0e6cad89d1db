package fake

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeloop/kubeloop/client"
)

// historySize is how many changes the fake keeps for watches that start
// at a resourceVersion (a List's, typically).
const historySize = 1024

// watchHub fans the store's changes out to watchers and keeps a short
// history. Its fields are guarded by Client.mu.
type watchHub struct {
	watchers map[*watcher]struct{}
	history  []change
}

// change is one write to the store.
type change struct {
	gk   schema.GroupKind
	key  client.ObjectKey
	old  map[string]any // nil for a create
	cur  map[string]any // nil for a delete
	rv   uint64
	kind watch.EventType
}

var _ client.WithWatch = (*Client)(nil)

// Watch watches the objects of list's item kind that opts select, like the
// API server: without a resourceVersion (Raw.ResourceVersion "" or "0")
// it first sends an ADDED event for every existing match, then every
// change; with a resourceVersion (from a List) it sends the changes after
// it, or answers 410 Gone when the fake's history (the last 1,024 writes)
// no longer reaches back that far. An object modified into or out of the
// selection arrives as ADDED or DELETED. Objects are of list's item type.
// The watch ends when Stop is called or ctx ends; events are never
// dropped, and a watcher that is not read never blocks writers.
func (c *Client) Watch(ctx context.Context, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
	if isNil(list) {
		return nil, fmt.Errorf("watch %T: %w", list, client.ErrNilObject)
	}
	gvk, err := c.gvkOf(list)
	if err != nil {
		return nil, fmt.Errorf("watch %T: %w", list, err)
	}
	o := (&client.ListOptions{}).ApplyOptions(opts)
	c.listScope(gvk, o)
	if err := client.InvalidSelectorError(o.LabelSelector); err != nil {
		return nil, opError("watch", gvk, o.Namespace, "", fmt.Errorf("invalid label selector: %w", err))
	}
	w := &watcher{c: c, gvk: gvk, list: list, opts: o, out: make(chan watch.Event), wake: make(chan struct{}, 1), done: make(chan struct{})}
	if o.FieldSelector != nil {
		w.reqs = o.FieldSelector.Requirements()
	}

	for _, r := range w.reqs {
		if _, ok := c.indexes[indexKey{gk: gvk.GroupKind(), field: r.Field}]; !ok && r.Field != "metadata.name" && r.Field != "metadata.namespace" {
			return nil, opError("watch", gvk, o.Namespace, "", fmt.Errorf("field selector %q: no index for field %q (add one with WithIndex)", o.FieldSelector, r.Field))
		}
	}
	c.mu.Lock()
	var rv string
	if o.Raw != nil {
		rv = o.Raw.ResourceVersion
	}
	switch rv {
	case "", "0":
		keys, err := c.match(gvk, &client.ListOptions{LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector, Namespace: o.Namespace})
		if err != nil {
			c.mu.Unlock()
			return nil, opError("watch", gvk, o.Namespace, "", err)
		}
		for _, k := range keys {
			w.enqueueLocked(watch.Added, c.objects[gvk.GroupKind()][k])
		}
	default:
		from, err := strconv.ParseUint(rv, 10, 64)
		if err != nil {
			c.mu.Unlock()
			return nil, opError("watch", gvk, o.Namespace, "", apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q", rv)))
		}
		h := c.hub.history
		if from < c.rv && (len(h) == 0 || h[0].rv > from+1) {
			c.mu.Unlock()
			return nil, opError("watch", gvk, o.Namespace, "", apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (the fake keeps the last %d writes)", from, historySize)))
		}
		for _, ch := range h {
			if ch.rv > from {
				w.observeLocked(ch)
			}
		}
	}
	if c.hub.watchers == nil {
		c.hub.watchers = map[*watcher]struct{}{}
	}
	c.hub.watchers[w] = struct{}{}
	c.mu.Unlock()

	go w.run(ctx)
	return w, nil
}

// notify records a change and hands it to the watchers. A delete gets a
// resourceVersion of its own, as on the API server. Caller holds mu.
func (c *Client) notify(gk schema.GroupKind, key client.ObjectKey, old, cur map[string]any) {
	ch := change{gk: gk, key: key, old: old, cur: cur, kind: watch.Modified}
	switch {
	case old == nil:
		ch.kind = watch.Added
	case cur == nil:
		ch.kind = watch.Deleted
		ch.old = deepCopy(old)
		metaOf(ch.old).SetResourceVersion(c.nextRV())
	}
	ch.rv = c.rv
	if cur != nil {
		if rv, ok := parseRV(metaOf(cur).GetResourceVersion()); ok {
			ch.rv = rv
		}
	}
	if len(c.hub.history) == historySize {
		c.hub.history = append(c.hub.history[:0:0], c.hub.history[1:]...)
	}
	c.hub.history = append(c.hub.history, ch)
	for w := range c.hub.watchers {
		w.observeLocked(ch)
	}
}

// watcher is one Watch. Its queue is unbounded, so that a writer holding
// Client.mu never waits for a reader.
type watcher struct {
	c    *Client
	gvk  schema.GroupVersionKind
	list client.ObjectList
	opts *client.ListOptions
	reqs fields.Requirements

	out      chan watch.Event
	wake     chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	mu    sync.Mutex
	queue []watch.Event
}

var _ watch.Interface = (*watcher)(nil)

// ResultChan returns the events; it is closed after Stop or the end of
// the context.
func (w *watcher) ResultChan() <-chan watch.Event { return w.out }

// Stop ends the watch. It may be called more than once.
func (w *watcher) Stop() {
	w.stopOnce.Do(func() {
		w.c.mu.Lock()
		delete(w.c.hub.watchers, w)
		w.c.mu.Unlock()
		close(w.done)
	})
}

// selects reports whether m (an object of the watched kind at key) is in
// the watch's selection. Caller holds Client.mu.
func (w *watcher) selects(key client.ObjectKey, m map[string]any) bool {
	if m == nil {
		return false
	}
	if w.opts.Namespace != "" && key.Namespace != w.opts.Namespace {
		return false
	}
	if w.opts.LabelSelector != nil && !w.opts.LabelSelector.Matches(labels.Set(metaOf(m).GetLabels())) {
		return false
	}
	ok, err := w.c.matchFields(w.gvk, key, m, w.reqs)
	return err == nil && ok
}

// observeLocked turns a change into the event this watch sees, if any.
// Caller holds Client.mu.
func (w *watcher) observeLocked(ch change) {
	if ch.gk != w.gvk.GroupKind() {
		return
	}
	was, is := w.selects(ch.key, ch.old), w.selects(ch.key, ch.cur)
	switch {
	case was && is:
		w.enqueueLocked(watch.Modified, ch.cur)
	case is:
		w.enqueueLocked(watch.Added, ch.cur)
	case was && ch.cur != nil:
		w.enqueueLocked(watch.Deleted, ch.cur) // modified out of the selection
	case was:
		w.enqueueLocked(watch.Deleted, ch.old)
	}
}

// enqueueLocked converts m to the list's item type and queues it.
func (w *watcher) enqueueLocked(t watch.EventType, m map[string]any) {
	var ev watch.Event
	item, err := w.c.newItem(w.list, w.gvk)
	if err == nil {
		err = w.c.fromMap(m, item, w.gvk)
	}
	if err != nil {
		ev = watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus}
	} else {
		ev = watch.Event{Type: t, Object: runtime.Object(item)}
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
func (w *watcher) run(ctx context.Context) {
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
