package cache

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"
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

func storeView(s *storeInformer) map[string]string {
	m := map[string]string{}
	for _, obj := range s.GetIndexer().List() {
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
	s := newStoreInformer(src, &corev1.ConfigMap{}, storeInformerOptions{description: "v1 ConfigMap"})
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
	byName, err := s.GetIndexer().ByIndex("name", "cm-9")
	require.NoError(t, err)
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
	s := newStoreInformer(src, &corev1.ConfigMap{}, storeInformerOptions{description: "v1 ConfigMap"})
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
