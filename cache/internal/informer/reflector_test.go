package informer

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// scriptedLW answers each list and watch call with the next answer of its
// script and records the options of every call.
type scriptedLW struct {
	mu      sync.Mutex
	lists   []func(metav1.ListOptions) (runtime.Object, error)
	watches []func(metav1.ListOptions) (watch.Interface, error)
	calls   []string // "list rv=..." / "watch rv=..."
	opts    []metav1.ListOptions
}

func (l *scriptedLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	l.mu.Lock()
	l.calls = append(l.calls, "list rv="+opts.ResourceVersion)
	l.opts = append(l.opts, opts)
	if len(l.lists) == 0 {
		l.mu.Unlock()
		return nil, errors.New("script: no more lists")
	}
	next := l.lists[0]
	l.lists = l.lists[1:]
	l.mu.Unlock()
	return next(opts)
}

func (l *scriptedLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	l.mu.Lock()
	l.calls = append(l.calls, "watch rv="+opts.ResourceVersion)
	l.opts = append(l.opts, opts)
	if len(l.watches) == 0 {
		l.mu.Unlock()
		return watch.NewFake(), nil // a watch that never sends
	}
	next := l.watches[0]
	l.watches = l.watches[1:]
	l.mu.Unlock()
	return next(opts)
}

func (l *scriptedLW) IsWatchListSemanticsUnSupported() bool { return true }

func (l *scriptedLW) record() ([]string, []metav1.ListOptions) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...), append([]metav1.ListOptions(nil), l.opts...)
}

func listOf(rv string, cms ...*corev1.ConfigMap) func(metav1.ListOptions) (runtime.Object, error) {
	return func(metav1.ListOptions) (runtime.Object, error) {
		l := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
		for _, cm := range cms {
			l.Items = append(l.Items, *cm)
		}
		return l, nil
	}
}

func cmAt(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

func bookmark(rv string) watch.Event {
	return watch.Event{Type: watch.Bookmark, Object: cmAt("", rv)}
}

// sending returns a watch answer that sends evs and then, if end, ends.
func sending(end bool, evs ...watch.Event) func(metav1.ListOptions) (watch.Interface, error) {
	return func(metav1.ListOptions) (watch.Interface, error) {
		w := watch.NewFakeWithChanSize(len(evs), false)
		for _, ev := range evs {
			w.Action(ev.Type, ev.Object)
		}
		if end {
			w.Stop()
		}
		return w, nil
	}
}

func failing(err error) func(metav1.ListOptions) (watch.Interface, error) {
	return func(metav1.ListOptions) (watch.Interface, error) { return nil, err }
}

// runInformer runs an informer over lw in the bubble until the returned
// stop is called, with a recordingHandler.
func runInformer(t *testing.T, lw *scriptedLW) (*Informer, *recordingHandler, func()) {
	t.Helper()
	h := newRecordingHandler()
	inf, stop := runWith(t, lw, Pipeline{OnWatchErr: func(context.Context, error) {}}, h)
	return inf, h, stop
}

// runWith runs the informer of p over lw with handler h until the
// returned stop is called.
func runWith(t *testing.T, lw *scriptedLW, p Pipeline, h toolscache.ResourceEventHandler) (*Informer, func()) {
	t.Helper()
	p.Description, p.ListWatch, p.Example = "v1 ConfigMap", lw, &corev1.ConfigMap{}
	inf := New(p)
	_, err := inf.AddEventHandler(h)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	return inf, func() { cancel(); <-done }
}

func expiredErr() error {
	return apierrors.NewResourceExpired("too old resource version")
}

// TestReflectorListsThenWatches lists, applies the list, watches from its
// resourceVersion with bookmarks and a timeout of 5 to 10 minutes,
// applies each event, and after a watch that ends normally watches again
// from the last version seen, without listing.
func TestReflectorListsThenWatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &scriptedLW{
			lists: []func(metav1.ListOptions) (runtime.Object, error){listOf("10", cmAt("a", "5"), cmAt("b", "6"))},
			watches: []func(metav1.ListOptions) (watch.Interface, error){
				sending(true,
					watch.Event{Type: watch.Modified, Object: cmAt("a", "11")},
					watch.Event{Type: watch.Added, Object: cmAt("c", "12")},
					watch.Event{Type: watch.Deleted, Object: cmAt("b", "13")},
					bookmark("20")),
			},
		}
		inf, h, stop := runInformer(t, lw)
		defer stop()
		time.Sleep(time.Second)
		synctest.Wait()

		calls, opts := lw.record()
		assert.Equal(t, []string{"list rv=0", "watch rv=10", "watch rv=20"}, calls)
		for _, o := range opts[1:] {
			assert.True(t, o.AllowWatchBookmarks)
			require.NotNil(t, o.TimeoutSeconds)
			assert.GreaterOrEqual(t, *o.TimeoutSeconds, int64(300))
			assert.Less(t, *o.TimeoutSeconds, int64(600))
		}
		assert.Equal(t, map[string]string{"a": "11", "c": "12"}, storeView(inf))
		seen, initial, problems := h.snapshot()
		assert.Equal(t, map[string]string{"a": "11", "c": "12"}, seen)
		assert.Equal(t, 2, initial)
		assert.Empty(t, problems)
		assert.Equal(t, uint64(20), inf.ObservedVersion(), "bookmarks are progress")
		assert.True(t, inf.HasSynced())
	})
}

// TestReflectorRelists: a watch that ends with 410 Gone relists from the
// last version seen; a list at that version that is itself expired lists
// again from etcd (""); a watch that ends at once having sent nothing
// relists (toolscache.VeryShortWatchError); a watch refused with 429 is
// retried without a list.
func TestReflectorRelists(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &scriptedLW{
			lists: []func(metav1.ListOptions) (runtime.Object, error){
				listOf("10", cmAt("a", "5")),
				func(metav1.ListOptions) (runtime.Object, error) { return nil, expiredErr() },
				listOf("30", cmAt("a", "25"), cmAt("b", "26")),
				listOf("40", cmAt("b", "26")),
			},
			watches: []func(metav1.ListOptions) (watch.Interface, error){
				sending(false, watch.Event{Type: watch.Modified, Object: cmAt("a", "15")},
					watch.Event{Type: watch.Error, Object: &expiredErr().(*apierrors.StatusError).ErrStatus}),
				sending(true), // ends at once, empty: a relist
				failing(apierrors.NewTooManyRequests("slow down", 1)),
			},
		}
		inf, h, stop := runInformer(t, lw)
		defer stop()
		time.Sleep(10 * time.Second)
		synctest.Wait()

		calls, _ := lw.record()
		assert.Equal(t, []string{
			"list rv=0", "watch rv=10", // 410 after a=15
			"list rv=15", "list rv=", // expired at 15: from etcd
			"watch rv=30",                              // ends at once, empty
			"list rv=30", "watch rv=40", "watch rv=40", // 429: watched again
		}, calls)
		assert.Equal(t, map[string]string{"b": "26"}, storeView(inf), "the relist deleted a")
		_, _, problems := h.snapshot()
		assert.Empty(t, problems)
	})
}

// TestReflectorWatchFromZero: a list whose resourceVersion is empty is
// watched from there; the server's first Added events come in no order,
// so only a later event of another type is progress.
func TestReflectorWatchFromZero(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &scriptedLW{
			lists: []func(metav1.ListOptions) (runtime.Object, error){listOf("")},
			watches: []func(metav1.ListOptions) (watch.Interface, error){
				sending(true,
					watch.Event{Type: watch.Added, Object: cmAt("a", "9")},
					watch.Event{Type: watch.Added, Object: cmAt("b", "7")}),
			},
		}
		inf, _, stop := runInformer(t, lw)
		defer stop()
		time.Sleep(time.Second)
		synctest.Wait()
		calls, _ := lw.record()
		require.GreaterOrEqual(t, len(calls), 3)
		assert.Equal(t, []string{"list rv=0", "watch rv=", "watch rv="}, calls[:3], "Added events from an empty version are not progress")
		assert.Equal(t, uint64(0), inf.ObservedVersion())
		assert.Equal(t, map[string]string{"a": "9", "b": "7"}, storeView(inf))
	})
}

// TestReflectorWatchErrors: a watch refused because the connection was
// refused is retried without a list; any other refusal ends the cycle
// with its error, which the informer reports and then lists again.
func TestReflectorWatchErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("no"))
		lw := &scriptedLW{
			lists: []func(metav1.ListOptions) (runtime.Object, error){listOf("10"), listOf("11")},
			watches: []func(metav1.ListOptions) (watch.Interface, error){
				failing(syscall.ECONNREFUSED),
				failing(forbidden),
			},
		}
		var mu sync.Mutex
		var reported []error
		_, stop := runWith(t, lw, Pipeline{OnWatchErr: func(_ context.Context, err error) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, err)
		}}, newRecordingHandler())
		defer stop()
		time.Sleep(time.Minute)
		synctest.Wait()
		calls, _ := lw.record()
		assert.Equal(t, []string{"list rv=0", "watch rv=10", "watch rv=10", "list rv=10", "watch rv=11"}, calls)
		mu.Lock()
		require.Len(t, reported, 1)
		assert.True(t, apierrors.IsForbidden(reported[0]), "%v", reported[0])
		mu.Unlock()
	})
}

// inlineWatch is a watch read with Next, as wire.Events is.
type inlineWatch struct {
	events   chan watch.Event
	stopped  chan struct{}
	stopOnce sync.Once
}

func newInlineWatch() *inlineWatch {
	return &inlineWatch{events: make(chan watch.Event), stopped: make(chan struct{})}
}

func (w *inlineWatch) Next() (watch.Event, bool) {
	select {
	case ev := <-w.events:
		return ev, true
	case <-w.stopped:
		return watch.Event{}, false
	}
}

func (w *inlineWatch) Drained() bool { return len(w.events) == 0 }

func (w *inlineWatch) Stop() { w.stopOnce.Do(func() { close(w.stopped) }) }

func (w *inlineWatch) ResultChan() <-chan watch.Event {
	panic("an inline watch is read with Next")
}

// TestReflectorReadsInlineWatchesInLine: events of an inline watch are
// applied as Next returns them, and the informer's end stops the watch
// that Next is blocked on.
func TestReflectorReadsInlineWatchesInLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newInlineWatch()
		lw := &scriptedLW{
			lists:   []func(metav1.ListOptions) (runtime.Object, error){listOf("10", cmAt("a", "5"))},
			watches: []func(metav1.ListOptions) (watch.Interface, error){func(metav1.ListOptions) (watch.Interface, error) { return w, nil }},
		}
		inf, h, stop := runInformer(t, lw)
		synctest.Wait()
		w.events <- watch.Event{Type: watch.Modified, Object: cmAt("a", "11")}
		synctest.Wait()
		assert.Equal(t, map[string]string{"a": "11"}, storeView(inf))
		assert.Equal(t, uint64(11), inf.ObservedVersion())
		seen, _, _ := h.snapshot()
		assert.Equal(t, "11", seen["a"])

		stop() // returns only once Next, blocked, has been stopped
		select {
		case <-w.stopped:
		default:
			t.Fatal("the watch was not stopped")
		}
	})
}

// TestReflectorResyncs replays the stored objects to the handlers every
// resync period while it watches.
func TestReflectorResyncs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &scriptedLW{lists: []func(metav1.ListOptions) (runtime.Object, error){listOf("10", cmAt("a", "5"))}}
		log := &eventLog{}
		_, stop := runWith(t, lw, Pipeline{Resync: time.Minute}, log)
		time.Sleep(150 * time.Second)
		synctest.Wait()
		stop()
		assert.Equal(t, []string{"add a rv=5 initial=true", "update a rv=5->5", "update a rv=5->5"}, log.take())
	})
}
