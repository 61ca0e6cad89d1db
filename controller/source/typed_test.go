package source_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/reconcile"
)

// typedRecorder is a typed handler of ConfigMaps: it reads a field only a
// *corev1.ConfigMap has, with no assertion.
func typedRecorder(events chan<- string) handler.TypedFuncs[*corev1.ConfigMap, reconcile.Request] {
	return handler.TypedFuncs[*corev1.ConfigMap, reconcile.Request]{
		CreateFunc: func(_ context.Context, e handler.TypedCreateEvent[*corev1.ConfigMap], _ handler.Queue) {
			events <- "create " + e.Object.Name + " " + e.Object.Data["x"]
		},
		UpdateFunc: func(_ context.Context, e handler.TypedUpdateEvent[*corev1.ConfigMap], _ handler.Queue) {
			events <- "update " + e.ObjectOld.Data["x"] + "->" + e.ObjectNew.Data["x"]
		},
		DeleteFunc: func(_ context.Context, e handler.TypedDeleteEvent[*corev1.ConfigMap], _ handler.Queue) {
			events <- "delete " + e.Object.Name
		},
	}
}

func withX(name, x string) *corev1.ConfigMap {
	c := cm(name)
	c.Data = map[string]string{"x": x}
	return c
}

func TestKindTyped(t *testing.T) {
	inf := newInformers()
	inf.run(t)
	events := make(chan string, 10)
	changedX := predicate.TypedFuncs[*corev1.ConfigMap]{UpdateFunc: func(e handler.TypedUpdateEvent[*corev1.ConfigMap]) bool {
		return e.ObjectNew.Data["x"] != e.ObjectOld.Data["x"]
	}}
	src := source.Kind(inf, &corev1.ConfigMap{}, typedRecorder(events), changedX)
	require.NoError(t, src.Start(t.Context(), newQueue(t)))
	require.NoError(t, src.WaitForSync(t.Context()))

	inf.src.Add(withX("a", "1"))
	inf.src.Modify(withX("a", "1")) // x unchanged: dropped by the typed predicate
	inf.src.Modify(withX("a", "2"))
	inf.src.Delete(withX("a", "2"))
	rec := &recorder{events: events}
	assert.Equal(t, "create a 1", rec.next(t))
	assert.Equal(t, "update 1->2", rec.next(t))
	assert.Equal(t, "delete a", rec.next(t))
}

func TestKindTypedMismatch(t *testing.T) {
	inf := newInformers()
	inf.run(t)
	src := source.Kind(inf, &corev1.Secret{}, typedRecorder(make(chan string)),
		predicate.TypedFuncs[*corev1.ConfigMap]{}, nil)
	err := src.Prepare(t.Context())
	assert.EqualError(t, err, "source: kind Secret: nil predicate (argument 2)\n"+
		"source: kind Secret: object *v1.Secret is not of the handler's and predicates' type *v1.ConfigMap")
	assert.Equal(t, 0, inf.getCount(), "no informer for a mistaken source")
}

func TestTypedKindAndChannelOfRequest(t *testing.T) {
	inf := newInformers()
	inf.run(t)
	events := make(chan string, 10)
	var src source.TypedSource[reconcile.Request] = source.TypedKind(inf, &corev1.ConfigMap{}, handler.TypedEventHandler[*corev1.ConfigMap, reconcile.Request](typedRecorder(events)))
	_, ok := src.(*source.KindSource)
	assert.True(t, ok, "TypedKind of reconcile.Request is Kind")
	require.NoError(t, src.Start(t.Context(), newQueue(t)))
	require.NoError(t, src.WaitForSync(t.Context()))
	inf.src.Add(withX("b", "3"))
	assert.Equal(t, "create b 3", (&recorder{events: events}).next(t))

	ch := make(chan handler.TypedGenericEvent[*corev1.ConfigMap], 1)
	csrc := source.TypedChannel(ch, handler.TypedEventHandler[*corev1.ConfigMap, reconcile.Request](&handler.TypedEnqueueRequestForObject[*corev1.ConfigMap]{}),
		source.WithBufferSize[*corev1.ConfigMap, reconcile.Request](8))
	q := newQueue(t)
	require.NoError(t, csrc.Start(t.Context(), q))
	ch <- handler.TypedGenericEvent[*corev1.ConfigMap]{Object: cm("c")}
	req, _ := q.Get()
	assert.Equal(t, "ns/c", req.String())
}
