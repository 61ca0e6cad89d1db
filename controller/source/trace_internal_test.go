package source

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/trace"
)

// eventQueue is an EventQueue that records the events it is told of and
// the Requests added through each event's queue.
type eventQueue struct {
	handler.Queue // nil: only the adds are used
	events        []trace.Event
	adds          map[string][]reconcile.Request // by the event's resourceVersion
}

func (q *eventQueue) ForEvent(ev trace.Event) handler.Queue {
	q.events = append(q.events, ev)
	return &addsOf{q: q, rv: ev.ResourceVersion}
}

type addsOf struct {
	handler.Queue
	q  *eventQueue
	rv string
}

func (a *addsOf) Add(req reconcile.Request) {
	if a.q.adds == nil {
		a.q.adds = map[string][]reconcile.Request{}
	}
	a.q.adds[a.rv] = append(a.q.adds[a.rv], req)
}

func TestEventHandlerTellsAnEventQueueOfEachEvent(t *testing.T) {
	old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "1"}}
	cur := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "2"}}
	q := &eventQueue{}
	e := &eventHandler{ctx: t.Context(), handler: &handler.EnqueueRequestForObject{}, queue: q, kind: "ConfigMap"}
	e.traced, _ = e.queue.(EventQueue) // as register does

	e.OnAdd(old, true)
	e.OnUpdate(old, cur)
	gone := cur.DeepCopy()
	gone.ResourceVersion = "3"
	e.OnCatchUpDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/a", Obj: gone})

	require.Len(t, q.events, 3)
	got := []trace.EventType{q.events[0].Type, q.events[1].Type, q.events[2].Type}
	assert.Equal(t, []trace.EventType{trace.EventCreate, trace.EventUpdate, trace.EventDelete}, got)
	assert.True(t, q.events[0].InitialList)
	assert.Equal(t, "2", q.events[1].ResourceVersion, "an update is the new object's")
	assert.True(t, q.events[2].CatchUp)
	for _, ev := range q.events {
		assert.Equal(t, "ConfigMap", ev.Kind)
		assert.Equal(t, "ns", ev.Namespace)
		assert.Equal(t, "a", ev.Name)
		assert.False(t, ev.Received.IsZero())
	}
	want := []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "a"}}}
	assert.Equal(t, want, q.adds["2"], "the handler added through the update's queue")
}

func TestEventHandlerWithAPlainQueueTracesNothing(t *testing.T) {
	a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "1"}}
	c := &capture{}
	e := &eventHandler{ctx: t.Context(), handler: c, queue: struct{ handler.Queue }{}, kind: "ConfigMap"}
	e.traced, _ = e.queue.(EventQueue)
	assert.Nil(t, e.traced)
	allocs := testing.AllocsPerRun(100, func() { e.OnUpdate(a, a) })
	assert.Zero(t, allocs, "an untraced event costs no allocation in the source")
}
