package source_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

func cm(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

// recorder is an EventHandler that sends a line per event.
type recorder struct{ events chan string }

func newRecorder() *recorder { return &recorder{events: make(chan string, 100)} }

func (r *recorder) Create(_ context.Context, e handler.CreateEvent, _ handler.Queue) {
	initial := ""
	if e.IsInInitialList {
		initial = " initial"
	}
	r.events <- "create " + e.Object.GetName() + initial
}

func (r *recorder) Update(_ context.Context, e handler.UpdateEvent, _ handler.Queue) {
	r.events <- "update " + e.ObjectNew.GetName()
}

func (r *recorder) Delete(_ context.Context, e handler.DeleteEvent, _ handler.Queue) {
	r.events <- "delete " + e.Object.GetName()
}

func (r *recorder) Generic(_ context.Context, e handler.GenericEvent, _ handler.Queue) {
	r.events <- "generic " + e.Object.GetName()
}

func (r *recorder) next(t *testing.T) string {
	t.Helper()
	select {
	case e := <-r.events:
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
		return ""
	}
}

func newQueue(t *testing.T) *workqueue.Queue[reconcile.Request] {
	q := workqueue.New(workqueue.Options[reconcile.Request]{})
	t.Cleanup(q.ShutDown)
	return q
}

func TestKindDeliversEvents(t *testing.T) {
	inf := newInformers()
	inf.src.Add(cm("before"))
	rec := newRecorder()
	// Drop objects named "skip" with a predicate.
	notSkip := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() != "skip" })
	src := source.Kind(inf, &corev1.ConfigMap{}, rec, notSkip)
	assert.Equal(t, "kind ConfigMap", src.String())

	require.NoError(t, src.Prepare(t.Context()))
	assert.Equal(t, 1, inf.getCount(), "Prepare obtains the informer")
	inf.run(t)
	require.NoError(t, src.Start(t.Context(), newQueue(t)))
	require.NoError(t, src.WaitForSync(t.Context()))
	assert.Equal(t, 1, inf.getCount(), "Start reuses the prepared informer")
	assert.Equal(t, "create before initial", rec.next(t))

	inf.src.Add(cm("skip"))
	inf.src.Add(cm("after"))
	assert.Equal(t, "create after", rec.next(t))
	inf.src.Modify(cm("after"))
	assert.Equal(t, "update after", rec.next(t))
	inf.src.Delete(cm("after"))
	assert.Equal(t, "delete after", rec.next(t))

	err := src.Start(t.Context(), newQueue(t))
	assert.ErrorIs(t, err, source.ErrStarted)
}

func TestKindWithoutPrepare(t *testing.T) {
	inf := newInformers()
	inf.src.Add(cm("a"))
	inf.run(t)
	rec := newRecorder()
	src := source.Kind(inf, &corev1.ConfigMap{}, rec)
	require.NoError(t, src.Start(t.Context(), newQueue(t)))
	require.NoError(t, src.WaitForSync(t.Context()))
	assert.Equal(t, "create a initial", rec.next(t))
}

func TestKindSyncTimeoutNamesKindAndCause(t *testing.T) {
	inf := newInformers()
	inf.src.ListError = errors.New(`configmaps is forbidden: User "bob" cannot list resource "configmaps"`)
	inf.health = errors.New(`cache: ConfigMap: configmaps is forbidden: User "bob" cannot list resource "configmaps"`)
	inf.run(t)
	src := source.Kind(inf, &corev1.ConfigMap{}, newRecorder())
	require.NoError(t, src.Start(t.Context(), newQueue(t)))

	ctx, cancel := context.WithTimeoutCause(t.Context(), 50*time.Millisecond, errors.New("CacheSyncTimeout 50ms exceeded"))
	defer cancel()
	err := src.WaitForSync(ctx)
	require.Error(t, err)
	assert.Equal(t, `source: kind ConfigMap did not sync: CacheSyncTimeout 50ms exceeded `+
		`(cache: ConfigMap: configmaps is forbidden: User "bob" cannot list resource "configmaps")`, err.Error())
	assert.ErrorIs(t, err, inf.health)
}

func TestKindValidates(t *testing.T) {
	err := source.Kind[client.Object](nil, &corev1.ConfigMap{}, nil).Start(t.Context(), newQueue(t))
	require.Error(t, err)
	assert.Equal(t, "source: kind ConfigMap: nil cache\nsource: kind ConfigMap: nil handler", err.Error())
}

func TestChannel(t *testing.T) {
	ch := make(chan handler.GenericEvent)
	rec := newRecorder()
	notSkip := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() != "skip" })
	src := source.Channel(ch, rec, source.WithPredicates[client.Object, reconcile.Request](notSkip))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	require.NoError(t, src.Start(ctx, newQueue(t)))
	require.NoError(t, src.WaitForSync(ctx))

	ch <- handler.GenericEvent{Object: cm("skip")}
	ch <- handler.GenericEvent{} // no object: dropped
	ch <- handler.GenericEvent{Object: cm("a")}
	assert.Equal(t, "generic a", rec.next(t))
	assert.ErrorIs(t, src.Start(ctx, newQueue(t)), source.ErrStarted)
	close(ch)
}

func TestChannelNil(t *testing.T) {
	err := source.Channel(nil, newRecorder()).Start(t.Context(), newQueue(t))
	assert.EqualError(t, err, "source: Channel has a nil channel")
}

func TestFunc(t *testing.T) {
	q := newQueue(t)
	src := source.Func(func(_ context.Context, q handler.Queue) error {
		q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cm("a"))})
		return nil
	})
	require.NoError(t, src.Start(t.Context(), q))
	require.NoError(t, src.WaitForSync(t.Context()))
	req, _ := q.Get()
	assert.Equal(t, "ns/a", req.String())
}
