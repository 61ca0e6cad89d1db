package informer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	goruntime "runtime"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/pager"
	"k8s.io/klog/v2"

	"github.com/kubeloop/kubeloop/internal/probe"
)

// reflector lists and watches one kind into a feed: client-go's
// Reflector's list-and-watch cycle (the same requests, resourceVersions,
// relists, bookmarks and retries), less its streaming list, which the
// informer leaves to client-go's Reflector. What differs is how it reads
// a watch: from a list-watch whose watches are inline (wire.Events, the
// built-in kinds), it pulls each event on its own goroutine and applies it
// there, where client-go's Reflector receives it from the decoding
// goroutine over a channel. Each event then costs one goroutine hop fewer
// on its way to the controller's queue (BENCHMARKS.md, end to end:
// latency and steady-state CPU per event).
//
// One more difference: the catch-up after an outage. A watch resumed from
// lastRV after a gap (the server was unreachable, the request was retried)
// first replays what changed meanwhile; the reflector asks the server for
// its current resourceVersion (a LIST of one object) as soon as the watch
// is open, and the events up to it are catch-up (feed.CatchUp), which
// controllers queue behind fresh events.
//
// A reflector runs on one goroutine; only Resync comes from another.
type reflector struct {
	lw           toolscache.ListerWatcherWithContext
	probe        toolscache.ListerWatcherWithContext // lw without the gate, for serverRV; nil: none
	feed         *feed
	description  string
	expectedType reflect.Type
	expectedGVK  *schema.GroupVersionKind // unstructured only
	resync       time.Duration

	lastRV      string // the resourceVersion to watch and relist from
	unavailable bool   // the last list at lastRV failed as expired or too large: list from etcd
	paginated   bool   // the first list (at "0") came in pages: keep paging

	watchEnded time.Time // when the last watch ended; zero after a list
	catchUpTo  uint64    // the open watch's events up to this resourceVersion are catch-up; 0: none
}

// catchUpGap is how long the informer must have gone without a watch for
// the next one's replay to be catch-up. A watch opened again at once (its
// timeout ended it) replays milliseconds of changes; one resumed after an
// outage replays the outage's, which controllers should queue behind
// fresh changes.
const catchUpGap = time.Second

// The watch timeouts client-go's Reflector asks for: random in [5, 10)
// minutes, so that the watches of many informers do not end together.
const minWatchTimeout = 5 * time.Minute

// inline is a watch whose events its reader pulls (wire.Events).
type inline interface {
	Next() (watch.Event, bool)
	// Drained reports whether the next Next waits for the server.
	Drained() bool
}

// errStopped ends a watch whose context ended.
var errStopped = errors.New("cache: stop requested")

// newReflector returns the reflector of lw into f, for the kind and
// resync period of p. probe (nil: none) is lw without the informer's
// gate, for the one LIST that finds the end of a resumed watch's
// catch-up.
func newReflector(lw, probe toolscache.ListerWatcher, f *feed, p Pipeline) *reflector {
	r := &reflector{
		lw:           toolscache.ToListerWatcherWithContext(lw),
		feed:         f,
		description:  p.Description,
		expectedType: reflect.TypeOf(p.Example),
		resync:       p.Resync,
	}
	if probe != nil {
		r.probe = toolscache.ToListerWatcherWithContext(probe)
	}
	if u, ok := p.Example.(*unstructured.Unstructured); ok {
		if gvk := u.GroupVersionKind(); !gvk.Empty() {
			r.expectedGVK = &gvk
		}
	}
	return r
}

// listAndWatch lists, then watches until a watch ends in a way that
// needs a relist (nil) or ctx ends (nil). It returns the list's error, or
// the error of a watch request that cannot be retried as it is.
func (r *reflector) listAndWatch(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	logger.V(3).Info("Listing and watching", "type", r.description)
	if err := r.list(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	logger.V(2).Info("Caches populated", "type", r.description)
	if r.resync > 0 {
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.resyncEvery(rctx)
		}()
		defer func() { cancel(); <-done }()
	}
	return r.watch(ctx)
}

// list lists every object, from lastRV ("0", the API server's watch cache,
// at first) and replaces the feed's objects with them.
func (r *reflector) list(ctx context.Context) error {
	opts := metav1.ListOptions{ResourceVersion: r.relistRV()}
	p := pager.New(pager.SimplePageFunc(func(o metav1.ListOptions) (runtime.Object, error) {
		return r.lw.ListWithContext(ctx, o)
	}))
	if !r.paginated && opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		// A list at a given version is served by the watch cache only
		// without a limit (client-go's Reflector does the same).
		p.PageSize = 0
	}
	list, paginated, err := p.ListWithAlloc(ctx, opts)
	if isExpired(err) || isTooLargeRV(err) {
		// The version is gone or not reached yet: list the latest from etcd.
		r.unavailable = true
		list, paginated, err = p.ListWithAlloc(ctx, metav1.ListOptions{ResourceVersion: r.relistRV()})
	}
	if err != nil {
		return fmt.Errorf("failed to list %v: %w", r.description, err)
	}
	if opts.ResourceVersion == "0" && paginated {
		r.paginated = true // the watch cache is off: keep paging
	}
	r.unavailable = false
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return fmt.Errorf("unable to understand list result %#v: %v", list, err)
	}
	items, err := meta.ExtractListWithAlloc(list)
	if err != nil {
		return fmt.Errorf("unable to understand list result %#v (%v)", list, err)
	}
	found := make([]any, len(items))
	for i, item := range items {
		found[i] = item
	}
	rv := lm.GetResourceVersion()
	if err := r.feed.Replace(found, rv); err != nil {
		return fmt.Errorf("unable to sync list result: %v", err)
	}
	r.lastRV = rv
	r.watchEnded, r.catchUpTo = time.Time{}, 0
	return nil
}

// serverRV returns the API server's current resourceVersion, from a LIST
// of at most one object read from etcd; 0 if it cannot tell.
func (r *reflector) serverRV(ctx context.Context) uint64 {
	if r.probe == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list, err := r.probe.ListWithContext(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		klog.FromContext(ctx).V(4).Info("Cannot tell where the catch-up ends", "type", r.description, "err", err)
		return 0
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(lm.GetResourceVersion(), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// isCatchUp reports whether the event at rv is part of the open watch's
// catch-up.
func (r *reflector) isCatchUp(rv string) bool {
	if r.catchUpTo == 0 {
		return false
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil || n > r.catchUpTo {
		r.catchUpTo = 0 // past it: the rest is news
		return false
	}
	return true
}

// relistRV is the resourceVersion of the next list: "" (etcd) after an
// expired or too large one, "0" (any, from the watch cache) at first,
// else the last one seen.
func (r *reflector) relistRV() string {
	switch {
	case r.unavailable:
		return ""
	case r.lastRV == "":
		return "0"
	}
	return r.lastRV
}

// watch watches from lastRV, again after each watch that ends normally,
// until one ends in a way that needs a relist or ctx ends (nil), or a
// watch request fails in a way that cannot be retried (its error).
func (r *reflector) watch(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	for ctx.Err() == nil {
		start := time.Now()
		timeout := int64((minWatchTimeout + rand.N(minWatchTimeout)).Seconds())
		opts := metav1.ListOptions{ResourceVersion: r.lastRV, TimeoutSeconds: &timeout, AllowWatchBookmarks: true}
		// From "" or "0" the server first sends the objects as Added
		// events in no particular order: their versions are not progress.
		propagate := opts.ResourceVersion != "" && opts.ResourceVersion != "0"
		w, err := r.lw.WatchWithContext(ctx, opts)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if utilnet.IsConnectionRefused(err) || apierrors.IsTooManyRequests(err) {
				// Watch again from where it was: the list-watch's gate waits.
				logger.V(4).Info("Watch failed - backing off", "type", r.description, "err", err)
				if !sleep(ctx, reflectorDelay) {
					return nil
				}
				continue
			}
			return err
		}
		r.catchUpTo = 0
		if !r.watchEnded.IsZero() && time.Since(r.watchEnded) >= catchUpGap {
			r.catchUpTo = r.serverRV(ctx)
		}
		err = r.handle(ctx, start, w, propagate)
		w.Stop()
		r.watchEnded = time.Now()
		if err == nil {
			continue
		}
		switch {
		case errors.Is(err, errStopped) || ctx.Err() != nil:
		case isExpired(err):
			// Relist from lastRV: a list at a version returns data at least
			// as fresh, and it falls back to etcd if that too is expired.
			logger.V(4).Info("Watch closed", "type", r.description, "err", err)
		case apierrors.IsTooManyRequests(err):
			logger.V(2).Info("Watch returned 429 - backing off", "type", r.description)
			if !sleep(ctx, reflectorDelay) {
				return nil
			}
			continue
		default:
			logger.Info("Warning: watch ended with error", "type", r.description, "err", err)
		}
		return nil
	}
	return nil
}

// handle applies w's events to the feed until w ends (nil), sends an
// error (it), or ctx ends (errStopped). A watch that ends within a second
// having sent nothing is an error (toolscache.VeryShortWatchError).
func (r *reflector) handle(ctx context.Context, start time.Time, w watch.Interface, propagate bool) error {
	next, release := receiver(ctx, w)
	defer release()
	in, _ := w.(inline)
	count := 0
	for {
		ev, ok := next()
		if ctx.Err() != nil {
			return errStopped
		}
		if !ok {
			break
		}
		if ev.Type == watch.Error {
			return apierrors.FromObject(ev.Object)
		}
		if !r.expected(ctx, ev.Object) {
			continue
		}
		m, err := meta.Accessor(ev.Object)
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Unable to understand watch event", "type", r.description, "event", ev)
			continue
		}
		catchUp := ev.Type != watch.Bookmark && r.isCatchUp(m.GetResourceVersion())
		switch ev.Type {
		case watch.Added:
			if catchUp {
				err = r.feed.CatchUp(ev.Object, false)
			} else {
				err = r.feed.Add(ev.Object)
			}
		case watch.Modified:
			propagate = true
			if catchUp {
				err = r.feed.CatchUp(ev.Object, false)
			} else {
				err = r.feed.Update(ev.Object)
			}
		case watch.Deleted:
			propagate = true
			if catchUp {
				err = r.feed.CatchUp(ev.Object, true)
			} else {
				err = r.feed.Delete(ev.Object)
			}
		case watch.Bookmark:
			propagate = true
		default:
			utilruntime.HandleErrorWithContext(ctx, nil, "Unknown watch event", "type", r.description, "event", ev)
		}
		if err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Unable to apply watch event", "type", r.description, "event", ev.Type, "object", klog.KObj(m))
		}
		if propagate {
			rv := m.GetResourceVersion()
			r.lastRV = rv
			r.feed.UpdateResourceVersion(rv)
		}
		count++
		if in != nil && in.Drained() {
			// Nothing more to decode: the next read waits for the server.
			// Let the worker the handlers just woke (queued to run next
			// on this processor) run first, rather than after this
			// goroutine has gone down to the connection and parked there.
			// In the end-to-end latency phase's execution trace the worker
			// waited 2.9 µs instead of 8.5 (p50) from runnable to running
			// (BENCHMARKS-perf.md).
			probe.Mark(probe.Yield)
			goruntime.Gosched()
		}
	}
	if count == 0 && time.Since(start) < time.Second {
		return &toolscache.VeryShortWatchError{Name: r.description}
	}
	klog.FromContext(ctx).V(4).Info("Watch close", "type", r.description, "totalItems", count)
	return nil
}

// receiver returns the function that reads w's next event: in line from
// an inline watch (which ctx's end stops), else from its channel; false
// once w has ended or ctx has. release lets go of ctx.
func receiver(ctx context.Context, w watch.Interface) (next func() (watch.Event, bool), release func()) {
	if in, ok := w.(inline); ok {
		stop := context.AfterFunc(ctx, w.Stop)
		return in.Next, func() { stop() }
	}
	ch := w.ResultChan()
	return func() (watch.Event, bool) {
		select {
		case <-ctx.Done():
			return watch.Event{}, false
		case ev, ok := <-ch:
			return ev, ok
		}
	}, func() {}
}

// expected reports whether obj is of the informer's type (and, for
// unstructured objects, kind); it reports one that is not.
func (r *reflector) expected(ctx context.Context, obj runtime.Object) bool {
	if a := reflect.TypeOf(obj); a != r.expectedType {
		utilruntime.HandleErrorWithContext(ctx, nil, "Unexpected watch event object type", "type", r.description, "expectedType", r.expectedType, "actualType", a)
		return false
	}
	if r.expectedGVK != nil {
		if a := obj.GetObjectKind().GroupVersionKind(); a != *r.expectedGVK {
			utilruntime.HandleErrorWithContext(ctx, nil, "Unexpected watch event object gvk", "type", r.description, "expectedGVK", *r.expectedGVK, "actualGVK", a)
			return false
		}
	}
	return true
}

// resyncEvery hands every stored object to the handlers every r.resync
// until ctx ends.
func (r *reflector) resyncEvery(ctx context.Context) {
	t := time.NewTicker(r.resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := r.feed.Resync(); err != nil {
			utilruntime.HandleErrorWithContext(ctx, err, "Resync failed", "type", r.description)
		}
	}
}

// sleep waits d or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// isTooLargeRV reports an error saying that the API server has not
// reached the requested resourceVersion yet.
func isTooLargeRV(err error) bool {
	return apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge)
}
