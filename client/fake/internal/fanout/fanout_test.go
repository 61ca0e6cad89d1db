package fanout_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeloop/kubeloop/client/fake/internal/fanout"
)

var cm = schema.GroupKind{Kind: "ConfigMap"}

// labelView selects the objects whose label "app" is want; Object wraps
// the map as unstructured, or fails for objects named "bad".
type labelView struct{ want string }

func (v labelView) Selects(_ types.NamespacedName, m map[string]any) bool {
	app, _, _ := unstructured.NestedString(m, "metadata", "labels", "app")
	return app == v.want
}

func (labelView) Object(m map[string]any) (runtime.Object, error) {
	if name, _, _ := unstructured.NestedString(m, "metadata", "name"); name == "bad" {
		return nil, fmt.Errorf("cannot convert %q", name)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func obj(name, app string) map[string]any {
	return map[string]any{"metadata": map[string]any{"name": name, "labels": map[string]any{"app": app}}}
}

func change(gk schema.GroupKind, name string, old, cur map[string]any, rv uint64) fanout.Change {
	return fanout.Change{GK: gk, Key: types.NamespacedName{Namespace: "ns", Name: name}, Old: old, Cur: cur, RV: rv}
}

type seen struct {
	typ  watch.EventType
	name string
}

// next reads n events.
func next(t *testing.T, w watch.Interface, n int) []seen {
	t.Helper()
	var out []seen
	for range n {
		ev, ok := <-w.ResultChan()
		require.True(t, ok, "the channel closed early")
		name := ""
		if u, ok := ev.Object.(*unstructured.Unstructured); ok {
			name = u.GetName()
		}
		out = append(out, seen{ev.Type, name})
	}
	return out
}

func TestSelectionMoves(t *testing.T) {
	var h fanout.Hub
	w := h.Watch(context.Background(), cm, labelView{want: "web"}, []map[string]any{obj("a", "web")})
	defer w.Stop()

	h.Publish(change(schema.GroupKind{Kind: "Secret"}, "s", nil, obj("s", "web"), 2)) // other kind
	h.Publish(change(cm, "b", nil, obj("b", "db"), 3))                                // not selected
	h.Publish(change(cm, "b", obj("b", "db"), obj("b", "web"), 4))                    // moved in
	h.Publish(change(cm, "a", obj("a", "web"), obj("a", "web"), 5))                   // inside
	h.Publish(change(cm, "a", obj("a", "web"), obj("a", "db"), 6))                    // moved out
	h.Publish(change(cm, "b", obj("b", "web"), nil, 7))                               // deleted

	assert.Equal(t, []seen{
		{watch.Added, "a"}, {watch.Added, "b"}, {watch.Modified, "a"}, {watch.Deleted, "a"}, {watch.Deleted, "b"},
	}, next(t, w, 5))
}

func TestWatchFrom(t *testing.T) {
	var h fanout.Hub
	for rv := uint64(1); rv <= 3; rv++ {
		h.Publish(change(cm, fmt.Sprint("o", rv), nil, obj(fmt.Sprint("o", rv), "web"), rv))
	}
	w, err := h.WatchFrom(context.Background(), cm, labelView{want: "web"}, 1, 3)
	require.NoError(t, err)
	defer w.Stop()
	assert.Equal(t, []seen{{watch.Added, "o2"}, {watch.Added, "o3"}}, next(t, w, 2), "the changes after rv 1")

	h.Publish(change(cm, "o4", nil, obj("o4", "web"), 4))
	w2, err := h.WatchFrom(context.Background(), cm, labelView{want: "web"}, 4, 4)
	require.NoError(t, err, "from the current version")
	defer w2.Stop()
	h.Publish(change(cm, "o5", nil, obj("o5", "web"), 5))
	assert.Equal(t, []seen{{watch.Added, "o5"}}, next(t, w2, 1), "nothing replayed, then the next change")
}

func TestWatchFromTooOld(t *testing.T) {
	var h fanout.Hub
	for rv := uint64(1); rv <= fanout.History+1; rv++ {
		h.Publish(change(cm, "o", nil, obj("o", "web"), rv))
	}
	_, err := h.WatchFrom(context.Background(), cm, labelView{want: "web"}, 0, fanout.History+1)
	assert.True(t, apierrors.IsResourceExpired(err), "the first change fell out of the history: %v", err)
	w, err := h.WatchFrom(context.Background(), cm, labelView{want: "web"}, 1, fanout.History+1)
	require.NoError(t, err, "rv 2 is the oldest kept change, so a watch from 1 misses nothing")
	w.Stop()
}

func TestConversionErrorIsAnErrorEvent(t *testing.T) {
	var h fanout.Hub
	w := h.Watch(context.Background(), cm, labelView{want: "web"}, []map[string]any{obj("bad", "web")})
	defer w.Stop()
	ev := <-w.ResultChan()
	assert.Equal(t, watch.Error, ev.Type)
	st, ok := ev.Object.(*metav1.Status)
	require.True(t, ok, "an Error event carries a Status, not %T", ev.Object)
	assert.Equal(t, `Internal error occurred: cannot convert "bad"`, st.Message)
}

func TestUnreadWatcherNeverBlocksPublish(t *testing.T) {
	var h fanout.Hub
	w := h.Watch(context.Background(), cm, labelView{want: "web"}, nil)
	for rv := uint64(1); rv <= 100; rv++ {
		h.Publish(change(cm, "o", nil, obj("o", "web"), rv)) // nobody reads
	}
	got := next(t, w, 100)
	assert.Len(t, got, 100, "nothing dropped")
	w.Stop()
	w.Stop() // twice is fine
	_, open := <-w.ResultChan()
	assert.False(t, open, "Stop closes the channel")
}

func TestContextEndsTheWatch(t *testing.T) {
	var h fanout.Hub
	ctx, cancel := context.WithCancel(context.Background())
	w := h.Watch(ctx, cm, labelView{want: "web"}, nil)
	cancel()
	for range w.ResultChan() {
	}
	h.Publish(change(cm, "o", nil, obj("o", "web"), 1)) // the ended watcher is gone
}
