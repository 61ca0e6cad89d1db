package informer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"

	"github.com/kubeloop/kubeloop/cache/internal/health"
	"github.com/kubeloop/kubeloop/cache/internal/store"
)

// recordingHandler keeps, per key, the last object it was told about, and
// flags events that contradict what it saw before.
type recordingHandler struct {
	mu       sync.Mutex
	seen     map[string]string // key -> resourceVersion
	initial  int
	problems []string
}

func newRecordingHandler() *recordingHandler { return &recordingHandler{seen: map[string]string{}} }

func (h *recordingHandler) OnAdd(obj any, isInInitialList bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	cm := obj.(*corev1.ConfigMap)
	if _, ok := h.seen[cm.Name]; ok {
		h.problems = append(h.problems, "second add of "+cm.Name)
	}
	h.seen[cm.Name] = cm.ResourceVersion
	if isInInitialList {
		h.initial++
	}
}

func (h *recordingHandler) OnUpdate(oldObj, newObj any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	old, cm := oldObj.(*corev1.ConfigMap), newObj.(*corev1.ConfigMap)
	if h.seen[cm.Name] != old.ResourceVersion {
		h.problems = append(h.problems, fmt.Sprintf("update of %s from %s, last seen %q", cm.Name, old.ResourceVersion, h.seen[cm.Name]))
	}
	h.seen[cm.Name] = cm.ResourceVersion
}

func (h *recordingHandler) OnDelete(obj any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	cm := obj.(*corev1.ConfigMap)
	if _, ok := h.seen[cm.Name]; !ok {
		h.problems = append(h.problems, "delete of unseen "+cm.Name)
	}
	delete(h.seen, cm.Name)
}

func (h *recordingHandler) snapshot() (map[string]string, int, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := make(map[string]string, len(h.seen))
	for k, v := range h.seen {
		m[k] = v
	}
	return m, h.initial, append([]string(nil), h.problems...)
}

func storeView(s *Informer) map[string]string {
	m := map[string]string{}
	for _, obj := range s.Store().Objects() {
		cm := obj.(*corev1.ConfigMap)
		m[cm.Name] = cm.ResourceVersion
	}
	return m
}

func cmNamed(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

func TestStoreInformerHandlers(t *testing.T) {
	src := &fakeSource{FakeControllerSource: fcache.NewFakeControllerSource()}
	t.Cleanup(src.Shutdown)
	for i := range 3 {
		src.Add(cmNamed(fmt.Sprint("cm-", i)))
	}
	s := New(Pipeline{ListWatch: src, Example: &corev1.ConfigMap{}, Description: "v1 ConfigMap"})
	early := newRecordingHandler()
	earlyReg, err := s.AddEventHandler(early)
	require.NoError(t, err)
	assert.False(t, earlyReg.HasSynced(), "not before the informer runs")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.RunWithContext(ctx) }()
	select {
	case <-earlyReg.HasSyncedChecker().Done():
	case <-time.After(time.Minute):
		t.Fatal("not synced")
	}
	seen, initial, problems := early.snapshot()
	assert.Len(t, seen, 3, "handlers have seen the initial list once synced")
	assert.Equal(t, 3, initial)
	assert.Empty(t, problems)

	late := newRecordingHandler()
	lateReg, err := s.AddEventHandler(late)
	require.NoError(t, err)
	assert.True(t, lateReg.HasSynced())
	seen, initial, _ = late.snapshot()
	assert.Len(t, seen, 3, "a late handler gets the stored objects before AddEventHandler returns")
	assert.Equal(t, 3, initial)

	src.Modify(cmNamed("cm-0"))
	src.Delete(cmNamed("cm-1"))
	require.Eventually(t, func() bool {
		a, _, _ := early.snapshot()
		b, _, _ := late.snapshot()
		return len(a) == 2 && len(b) == 2 && a["cm-0"] == storeView(s)["cm-0"] && b["cm-0"] == a["cm-0"]
	}, time.Minute, time.Millisecond)

	require.NoError(t, s.RemoveEventHandler(earlyReg))
	require.NoError(t, s.RemoveEventHandler(earlyReg), "twice is fine")
	assert.Error(t, s.RemoveEventHandler(&multiRegistration{}), "a foreign handle")
	src.Add(cmNamed("cm-9"))
	require.Eventually(t, func() bool { b, _, _ := late.snapshot(); return len(b) == 3 }, time.Minute, time.Millisecond)
	a, _, _ := early.snapshot()
	assert.Len(t, a, 2, "a removed handler hears nothing more")

	require.NoError(t, s.AddIndexers(toolscache.Indexers{"name": func(obj any) ([]string, error) {
		return []string{obj.(*corev1.ConfigMap).Name}, nil
	}}))
	var byName []any
	require.NoError(t, s.Store().ByIndex("name", "cm-9", func(obj any) bool { byName = append(byName, obj); return true }))
	assert.Len(t, byName, 1, "an index added late covers the stored objects")

	cancel()
	<-done
	assert.True(t, s.IsStopped())
	_, err = s.AddEventHandler(newRecordingHandler())
	assert.Error(t, err, "no handlers on a stopped informer")
	_, err = s.AddEventHandler(nil)
	assert.Error(t, err)
}

// TestStoreInformerLateHandlerUnderChurn adds handlers while the store
// changes: each must see every object once, before its updates, and end
// with the store's view.
func TestStoreInformerLateHandlerUnderChurn(t *testing.T) {
	src := &fakeSource{FakeControllerSource: fcache.NewFakeControllerSource()}
	t.Cleanup(src.Shutdown)
	s := New(Pipeline{ListWatch: src, Example: &corev1.ConfigMap{}, Description: "v1 ConfigMap"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); s.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()

	const n = 300
	writer := make(chan struct{})
	go func() {
		defer close(writer)
		for i := range n {
			name := fmt.Sprint("cm-", i%50)
			switch {
			case i < 50:
				src.Add(cmNamed(name))
			case i%7 == 0:
				src.Delete(cmNamed(name))
				src.Add(cmNamed(name))
			default:
				src.Modify(cmNamed(name))
			}
		}
	}()
	var handlers []*recordingHandler
	for range 10 {
		h := newRecordingHandler()
		_, err := s.AddEventHandler(h)
		require.NoError(t, err)
		handlers = append(handlers, h)
		time.Sleep(time.Millisecond)
	}
	<-writer
	require.Eventually(t, func() bool {
		want := storeView(s)
		if len(want) != 50 {
			return false
		}
		for _, h := range handlers {
			got, _, _ := h.snapshot()
			if !assert.ObjectsAreEqual(want, got) {
				return false
			}
		}
		return true
	}, time.Minute, 5*time.Millisecond)
	for i, h := range handlers {
		_, _, problems := h.snapshot()
		assert.Empty(t, problems, "handler %d", i)
	}
}

// eventLog records handler calls as short strings.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, fmt.Sprintf(format, args...))
}

func (l *eventLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.events
	l.events = nil
	return e
}

func (l *eventLog) OnAdd(obj any, initial bool) {
	cm := obj.(*corev1.ConfigMap)
	l.add("add %s rv=%s initial=%v", cm.Name, cm.ResourceVersion, initial)
}

func (l *eventLog) OnUpdate(oldObj, newObj any) {
	o, n := oldObj.(*corev1.ConfigMap), newObj.(*corev1.ConfigMap)
	l.add("update %s rv=%s->%s", n.Name, o.ResourceVersion, n.ResourceVersion)
}

func (l *eventLog) OnDelete(obj any) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		l.add("delete %s", o.Name)
	case toolscache.DeletedFinalStateUnknown:
		l.add("delete-unknown %s rv=%s", o.Key, o.Obj.(*corev1.ConfigMap).ResourceVersion)
	default:
		l.add("delete %T", obj)
	}
}

// TestFeed drives the feed as the Reflector does, without one: lists,
// relists, watch events and resyncs reach the store and the handlers in
// order, transformed, with the initial list flagged and relist deletions
// as DeletedFinalStateUnknown.
func TestFeed(t *testing.T) {
	cmRV := func(name, rv string) *corev1.ConfigMap {
		cm := cmNamed(name)
		cm.ResourceVersion = rv
		cm.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "test"}}
		return cm
	}
	transformed := 0
	var prevs []string // the stored version each transform was given
	s := New(Pipeline{
		Example:     &corev1.ConfigMap{},
		Description: "v1 ConfigMap",
		Transform: func(obj, prev any) (any, error) {
			transformed++
			if prev != nil {
				prevs = append(prevs, obj.(*corev1.ConfigMap).Name+"@"+prev.(*corev1.ConfigMap).ResourceVersion)
			}
			obj.(*corev1.ConfigMap).ManagedFields = nil
			return obj, nil
		},
	})
	log := &eventLog{}
	_, err := s.AddEventHandler(log)
	require.NoError(t, err)
	f := s.feed
	assert.False(t, s.HasSynced())

	require.NoError(t, f.Replace([]any{cmRV("a", "1"), cmRV("b", "1")}, "1"))
	assert.True(t, s.HasSynced(), "synced once the first list is applied")
	select {
	case <-s.HasSyncedChecker().Done():
	default:
		t.Fatal("the synced checker's channel is not closed")
	}
	assert.Equal(t, []string{"add a rv=1 initial=true", "add b rv=1 initial=true"}, log.take())

	require.NoError(t, f.Update(cmRV("a", "2")))
	require.NoError(t, f.Add(cmRV("c", "3")))
	require.NoError(t, f.Delete(cmRV("b", "4")))
	assert.Equal(t, []string{"update a rv=1->2", "add c rv=3 initial=false", "delete b"}, log.take())

	// A relist that misses c, changes a and brings d.
	require.NoError(t, f.Replace([]any{cmRV("a", "5"), cmRV("d", "5")}, "5"))
	assert.Equal(t, []string{"delete-unknown ns/c rv=3", "update a rv=2->5", "add d rv=5 initial=false"}, log.take())
	assert.Equal(t, map[string]string{"a": "5", "d": "5"}, storeView(s))

	require.NoError(t, f.Resync())
	got := log.take()
	assert.ElementsMatch(t, []string{"update a rv=5->5", "update d rv=5->5"}, got)

	assert.Equal(t, 7, transformed, "every object the reflector hands over is transformed once")
	assert.Equal(t, []string{"a@1", "b@1", "a@2"}, prevs, "the transform is given the stored version")
	for _, obj := range s.Store().Objects() {
		assert.Nil(t, obj.(*corev1.ConfigMap).ManagedFields, "stored objects are the transformed ones")
	}

	done := make(chan error)
	go func() { _, err := f.Pop(nil); done <- err }()
	f.Close()
	f.Close()
	assert.ErrorIs(t, <-done, toolscache.ErrFIFOClosed, "Pop waits for Close")
}

// TestFeedTransformError keeps a failed transform out of the store and
// hands its error to the caller (the Reflector logs it).
func TestFeedTransformError(t *testing.T) {
	boom := fmt.Errorf("boom")
	s := New(Pipeline{
		Example:     &corev1.ConfigMap{},
		Description: "v1 ConfigMap",
		Transform:   func(any, any) (any, error) { return nil, boom },
	})
	assert.ErrorIs(t, s.feed.Add(cmNamed("a")), boom)
	assert.ErrorIs(t, s.feed.Replace([]any{cmNamed("a")}, "1"), boom)
	assert.Empty(t, s.Store().Objects())

	renaming := New(Pipeline{
		Example:     &corev1.ConfigMap{},
		Description: "v1 ConfigMap",
		Transform:   func(any, any) (any, error) { return cmNamed("other"), nil },
	})
	assert.ErrorContains(t, renaming.feed.Add(cmNamed("a")), "transform of ns/a returned *v1.ConfigMap named ns/other")
	assert.Empty(t, renaming.Store().Objects())
}

// TestParseKey parses tombstone keys as client-go's SplitMetaNamespaceKey
// does.
func TestParseKey(t *testing.T) {
	for _, key := range []string{"", "a", "ns/a", "/a", "ns/", "a/b/c", "//"} {
		ns, name, err := toolscache.SplitMetaNamespaceKey(key)
		k, kerr := parseKey(key)
		if err != nil {
			assert.Error(t, kerr, key)
			continue
		}
		require.NoError(t, kerr, key)
		assert.Equal(t, store.Key{Namespace: ns, Name: name}, k, key)
		if key != "" && key[0] != '/' {
			assert.Equal(t, key, k.String(), "round trip")
		}
	}
}

// fakeSource is a FakeControllerSource that does not speak streaming
// lists.
type fakeSource struct {
	*fcache.FakeControllerSource
}

func (f *fakeSource) IsWatchListSemanticsUnSupported() bool { return true }

// recordingView is a StoreView that records the lookup attached to it
// and whether it is attached, as listwatch.StoreView registers it with the
// decoder's wire.Stored.
type recordingView struct {
	mu       sync.Mutex
	lookup   func(namespace, name string) (any, bool)
	attached bool
}

var _ StoreView = (*recordingView)(nil)

func (v *recordingView) Attach(lookup func(namespace, name string) (any, bool)) func() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.lookup, v.attached = lookup, true
	return func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		v.attached = false
	}
}

func (v *recordingView) state() (func(string, string) (any, bool), bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.lookup, v.attached
}

// TestGroupSharesTheStoreWhileRunning attaches a running informer's store
// to the StoreView its pipeline names, and detaches it when the informer
// stops; the group reports the pipeline's health.
func TestGroupSharesTheStoreWhileRunning(t *testing.T) {
	src := &fakeSource{FakeControllerSource: fcache.NewFakeControllerSource()}
	t.Cleanup(src.Shutdown)
	cm := cmNamed("cm-0")
	cm.Namespace = "ns"
	src.Add(cm)
	view := &recordingView{}
	h := health.New(logr.Discard())
	g := NewGroup("v1 ConfigMap", logr.Discard())
	g.Add("", Pipeline{Description: "v1 ConfigMap", Example: &corev1.ConfigMap{}, ListWatch: src, StoreView: view, Health: h})
	assert.Same(t, h, g.All()[0].Health)
	_, attached := view.state()
	assert.False(t, attached, "not before the informer runs")

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	g.Start(ctx, &wg)
	require.Eventually(t, g.All()[0].Informer.HasSynced, time.Minute, time.Millisecond)
	lookup, attached := view.state()
	require.True(t, attached)
	got, ok := lookup("ns", "cm-0")
	require.True(t, ok, "the lookup reads the informer's store")
	assert.Equal(t, "cm-0", got.(*corev1.ConfigMap).Name)
	_, ok = lookup("ns", "missing")
	assert.False(t, ok)
	assert.NoError(t, h.Err())

	cancel()
	wg.Wait()
	_, attached = view.state()
	assert.False(t, attached, "detached once the informer stopped")
}

// expectingLog is an eventLog told how many adds are about to come.
type expectingLog struct{ eventLog }

func (l *expectingLog) Expect(n int) { l.add("expect %d", n) }

// TestAddEventHandlerAnnouncesTheStore checks that a handler added to an
// informer holding objects is told their number before it gets them, in
// memory order.
func TestAddEventHandlerAnnouncesTheStore(t *testing.T) {
	s := New(Pipeline{Example: &corev1.ConfigMap{}, Description: "v1 ConfigMap"})
	var list []any
	for i := range 5 {
		list = append(list, cmNamed(fmt.Sprint("cm-", i)))
	}
	require.NoError(t, s.feed.Replace(list, "1"))
	h := &expectingLog{}
	_, err := s.AddEventHandler(h)
	require.NoError(t, err)
	got := h.take()
	require.Len(t, got, 6)
	assert.Equal(t, "expect 5", got[0], "announced first")
	var want []string
	for _, obj := range s.Store().Objects() {
		want = append(want, fmt.Sprintf("add %s rv= initial=true", obj.(*corev1.ConfigMap).Name))
	}
	assert.Equal(t, want, got[1:], "then handed every object, in the store's memory order")

	// A handler that takes no announcement gets the objects alone.
	plain := &eventLog{}
	_, err = s.AddEventHandler(plain)
	require.NoError(t, err)
	assert.Len(t, plain.take(), 5)
}
