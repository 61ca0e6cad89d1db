package source

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/reconcile"
)

// capture records the events handed to it.
type capture struct {
	creates []handler.CreateEvent
	updates []handler.UpdateEvent
	deletes []handler.DeleteEvent
}

func (c *capture) Create(_ context.Context, e handler.CreateEvent, _ handler.Queue) {
	c.creates = append(c.creates, e)
}

func (c *capture) Update(_ context.Context, e handler.UpdateEvent, _ handler.Queue) {
	c.updates = append(c.updates, e)
}

func (c *capture) Delete(_ context.Context, e handler.DeleteEvent, _ handler.Queue) {
	c.deletes = append(c.deletes, e)
}

func (c *capture) Generic(context.Context, handler.GenericEvent, handler.Queue) {}

func TestEventHandlerConversion(t *testing.T) {
	a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "1"}}
	b := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "2"}}
	c := &capture{}
	e := &eventHandler{ctx: t.Context(), handler: c, kind: "ConfigMap"}

	e.OnAdd(a, true)
	e.OnAdd(b, false)
	e.OnAdd("not an object", false)
	e.OnUpdate(a, b)
	e.OnUpdate(a, 42)
	e.OnDelete(b)
	e.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/a", Obj: a})
	e.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/x", Obj: "no meta"})

	assert.Equal(t, []handler.CreateEvent{{Object: a, IsInInitialList: true}, {Object: b}}, c.creates)
	assert.Equal(t, []handler.UpdateEvent{{ObjectOld: a, ObjectNew: b}}, c.updates)
	assert.Equal(t, []handler.DeleteEvent{{Object: b}, {Object: a, DeleteStateUnknown: true}}, c.deletes)
}

func TestEventHandlerPredicates(t *testing.T) {
	a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "1"}}
	c := &capture{}
	e := &eventHandler{ctx: t.Context(), handler: c, preds: []predicate.Predicate{
		predicate.Funcs{},
		predicate.ResourceVersionChangedPredicate{},
		predicate.Funcs{DeleteFunc: func(handler.DeleteEvent) bool { return false }},
	}}
	e.OnAdd(a, false)
	e.OnUpdate(a, a) // resync: dropped by the second predicate
	e.OnDelete(a)    // dropped by the third predicate
	assert.Len(t, c.creates, 1)
	assert.Empty(t, c.updates)
	assert.Empty(t, c.deletes)
}

// announcedQueue is a queue that records announcements.
type announcedQueue struct {
	handler.Queue
	expected []int
}

func (q *announcedQueue) Expect(n int) { q.expected = append(q.expected, n) }

// TestEventHandlerPassesAnnouncementsOn checks that an informer's
// announcement of its objects reaches a queue that takes one, and that a
// queue that does not is left alone.
func TestEventHandlerPassesAnnouncementsOn(t *testing.T) {
	q := &announcedQueue{}
	e := &eventHandler{ctx: t.Context(), handler: &capture{}, queue: q, kind: "ConfigMap"}
	e.Expect(7)
	assert.Equal(t, []int{7}, q.expected)

	plain := &eventHandler{ctx: t.Context(), handler: &capture{}, queue: struct{ handler.Queue }{}, kind: "ConfigMap"}
	plain.Expect(7) // no Expect: nothing happens
}

// The informer of kubeloop's cache calls these, instead of OnAdd, OnUpdate
// and OnDelete, for the catch-up after an outage (cache/internal/informer's
// catchUpHandler); the end-to-end test of fresh changes first
// (internal/reliability) checks that the two sides meet.
var _ interface {
	OnCatchUpAdd(obj any)
	OnCatchUpUpdate(oldObj, newObj any)
	OnCatchUpDelete(obj any)
} = (*eventHandler)(nil)

// TestEventHandlerMarksCatchUp: catch-up adds, updates and deletes become
// events with CatchUp set, through predicates and typed handlers alike.
func TestEventHandlerMarksCatchUp(t *testing.T) {
	a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "1"}}
	b := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "2"}}
	c := &capture{}
	var seen []bool // CatchUp as the typed predicate saw it
	pred := predicate.TypedFuncs[*corev1.ConfigMap]{
		CreateFunc: func(e handler.TypedCreateEvent[*corev1.ConfigMap]) bool {
			seen = append(seen, e.CatchUp)
			return true
		},
		UpdateFunc: func(e handler.TypedUpdateEvent[*corev1.ConfigMap]) bool {
			seen = append(seen, e.CatchUp)
			return true
		},
		DeleteFunc: func(e handler.TypedDeleteEvent[*corev1.ConfigMap]) bool {
			seen = append(seen, e.CatchUp)
			return true
		},
	}
	e := &eventHandler{ctx: t.Context(), handler: c, kind: "ConfigMap", preds: []predicate.Predicate{untypedPredicate(pred)}}
	e.OnCatchUpAdd(a)
	e.OnCatchUpUpdate(a, b)
	e.OnCatchUpDelete(b)
	e.OnCatchUpDelete(toolscache.DeletedFinalStateUnknown{Key: "ns/a", Obj: a})
	e.OnCatchUpAdd("not an object")
	e.OnAdd(a, false)
	e.OnUpdate(a, b)
	e.OnDelete(b)
	assert.Equal(t, []handler.CreateEvent{{Object: a, CatchUp: true}, {Object: a}}, c.creates)
	assert.Equal(t, []handler.UpdateEvent{{ObjectOld: a, ObjectNew: b, CatchUp: true}, {ObjectOld: a, ObjectNew: b}}, c.updates)
	assert.Equal(t, []handler.DeleteEvent{{Object: b, CatchUp: true}, {Object: a, CatchUp: true, DeleteStateUnknown: true}, {Object: b}}, c.deletes)
	assert.Equal(t, []bool{true, true, true, true, false, false, false}, seen)

	var typed []string
	th := untypedHandler[*corev1.ConfigMap](handler.TypedFuncs[*corev1.ConfigMap, reconcile.Request]{
		CreateFunc: func(_ context.Context, e handler.TypedCreateEvent[*corev1.ConfigMap], _ handler.TypedQueue[reconcile.Request]) {
			typed = append(typed, fmt.Sprintf("create catch-up=%v", e.CatchUp))
		},
		UpdateFunc: func(_ context.Context, e handler.TypedUpdateEvent[*corev1.ConfigMap], _ handler.TypedQueue[reconcile.Request]) {
			typed = append(typed, fmt.Sprintf("update catch-up=%v", e.CatchUp))
		},
		DeleteFunc: func(_ context.Context, e handler.TypedDeleteEvent[*corev1.ConfigMap], _ handler.TypedQueue[reconcile.Request]) {
			typed = append(typed, fmt.Sprintf("delete catch-up=%v", e.CatchUp))
		},
	})
	e = &eventHandler{ctx: t.Context(), handler: th, kind: "ConfigMap"}
	e.OnCatchUpAdd(a)
	e.OnCatchUpUpdate(a, b)
	e.OnCatchUpDelete(b)
	e.OnUpdate(a, b)
	assert.Equal(t, []string{"create catch-up=true", "update catch-up=true", "delete catch-up=true", "update catch-up=false"}, typed)
}
