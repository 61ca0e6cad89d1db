package handler_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/workqueue"
)

// relistCreate is a create that a relist found.
func relistCreate(obj client.Object) event {
	return func(ctx context.Context, h handler.EventHandler, q handler.Queue) {
		h.Create(ctx, handler.CreateEvent{Object: obj, CatchUp: true}, q)
	}
}

// relistUpdate is an update that a relist found.
func relistUpdate(oldObj, newObj client.Object) event {
	return func(ctx context.Context, h handler.EventHandler, q handler.Queue) {
		h.Update(ctx, handler.UpdateEvent{ObjectOld: oldObj, ObjectNew: newObj, CatchUp: true}, q)
	}
}

// relistDelete is a delete that a relist found (a tombstone).
func relistDelete(obj client.Object) event {
	return func(ctx context.Context, h handler.EventHandler, q handler.Queue) {
		h.Delete(ctx, handler.DeleteEvent{Object: obj, DeleteStateUnknown: true, CatchUp: true}, q)
	}
}

// Every built-in handler adds what a relist found at LowPriority and the
// same change from a watch event at normal priority.
func TestBuiltInHandlersQueueRelistsLow(t *testing.T) {
	s, m := ownerScheme(t)
	rs := ref("apps/v1", "ReplicaSet", "rs", true)
	mapFn := func(_ context.Context, obj client.Object) []reconcile.Request {
		return []reconcile.Request{req(obj.GetNamespace(), "to-"+obj.GetName())}
	}
	for _, tt := range []struct {
		name string
		give handler.EventHandler
		want string // the request's name
	}{
		{name: "EnqueueRequestForObject", give: &handler.EnqueueRequestForObject{}, want: "a"},
		{name: "EnqueueRequestForOwner", give: handler.EnqueueRequestForOwner(s, m, &appsv1.ReplicaSet{}), want: "rs"},
		{name: "EnqueueRequestsFromMapFunc", give: handler.EnqueueRequestsFromMapFunc(mapFn), want: "to-a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runCases(t, tt.give, []handlerCase{
				{name: "create from a relist", give: relistCreate(cm("ns", "a", "7", rs)), want: []added{low("ns", tt.want)}},
				{name: "update from a relist", give: relistUpdate(cm("ns", "a", "3", rs), cm("ns", "a", "7", rs)), want: []added{low("ns", tt.want)}},
				{name: "delete from a relist", give: relistDelete(cm("ns", "a", "3", rs)), want: []added{low("ns", tt.want)}},
				{name: "create from a watch", give: create(cm("ns", "a", "7", rs), false), want: []added{normal("ns", tt.want)}},
				{name: "update from a watch", give: update(cm("ns", "a", "3", rs), cm("ns", "a", "7", rs)), want: []added{normal("ns", tt.want)}},
				{name: "delete from a watch", give: del(cm("ns", "a", "3", rs)), want: []added{normal("ns", tt.want)}},
			})
		})
	}
}

// The typed forms do the same with their own event types.
func TestTypedHandlersQueueRelistsLow(t *testing.T) {
	s, m := ownerScheme(t)
	rs := ref("apps/v1", "ReplicaSet", "rs", true)
	mapFn := func(_ context.Context, c *corev1.ConfigMap) []reconcile.Request {
		return []reconcile.Request{req(c.Namespace, "to-"+c.Name)}
	}
	for _, tt := range []struct {
		name string
		give handler.TypedEventHandler[*corev1.ConfigMap, reconcile.Request]
		want string
	}{
		{name: "TypedEnqueueRequestForObject", give: &handler.TypedEnqueueRequestForObject[*corev1.ConfigMap]{}, want: "a"},
		{name: "TypedEnqueueRequestForOwner", give: handler.TypedEnqueueRequestForOwner[*corev1.ConfigMap](s, m, &appsv1.ReplicaSet{}), want: "rs"},
		{name: "TypedEnqueueRequestsFromMapFunc", give: handler.TypedEnqueueRequestsFromMapFunc(mapFn), want: "to-a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			q := &recordingQueue{}
			old, cur := cm("ns", "a", "3", rs), cm("ns", "a", "7", rs)
			tt.give.Create(ctx, handler.TypedCreateEvent[*corev1.ConfigMap]{Object: cur, CatchUp: true}, q)
			tt.give.Update(ctx, handler.TypedUpdateEvent[*corev1.ConfigMap]{ObjectOld: old, ObjectNew: cur, CatchUp: true}, q)
			tt.give.Delete(ctx, handler.TypedDeleteEvent[*corev1.ConfigMap]{Object: old, DeleteStateUnknown: true}, q)
			tt.give.Update(ctx, handler.TypedUpdateEvent[*corev1.ConfigMap]{ObjectOld: old, ObjectNew: cur}, q)
			w := tt.want
			assert.Equal(t, []added{low("ns", w), low("ns", w), low("ns", w), normal("ns", w)}, q.adds)
		})
	}
}

// WithLowPriorityWhenUnchanged lowers what a relist found too, and leaves
// a priority the wrapped handler chose alone.
func TestWithLowPriorityWhenUnchangedRelists(t *testing.T) {
	byName := func(_ context.Context, obj client.Object, q handler.Queue) { q.Add(req("ns", obj.GetName())) }
	h := handler.WithLowPriorityWhenUnchanged(handler.Funcs{
		CreateFunc: func(ctx context.Context, e handler.CreateEvent, q handler.Queue) { byName(ctx, e.Object, q) },
		UpdateFunc: func(ctx context.Context, e handler.UpdateEvent, q handler.Queue) { byName(ctx, e.ObjectNew, q) },
		DeleteFunc: func(_ context.Context, e handler.DeleteEvent, q handler.Queue) {
			handler.AddWithOpts(q, workqueue.AddOpts{Priority: 5}, req("ns", e.Object.GetName()))
		},
	})
	runCases(t, h, []handlerCase{
		{name: "create from a relist", give: relistCreate(cm("ns", "a", "1")), want: []added{low("ns", "a")}},
		{name: "update from a relist", give: relistUpdate(cm("ns", "a", "1"), cm("ns", "a", "2")), want: []added{low("ns", "a")}},
		{name: "delete from a relist keeps its own priority", give: relistDelete(cm("ns", "a", "1")), want: []added{{req: req("ns", "a"), priority: 5}}},
		{name: "delete from a watch", give: del(cm("ns", "a", "1")), want: []added{{req: req("ns", "a"), priority: 5}}},
	})
}

// With the real queue: after a relist's backlog, a fresh watch event is
// handed out first, and a backlog request that a fresh event names again
// is raised ahead of the rest of the backlog.
func TestFreshEventsOvertakeTheRelistBacklog(t *testing.T) {
	q := workqueue.New(workqueue.Options[reconcile.Request]{Name: "fresh-first"})
	defer q.ShutDown()
	h := &handler.EnqueueRequestForObject{}
	ctx := t.Context()
	for _, name := range []string{"b1", "b2", "b3", "b4"} {
		h.Update(ctx, handler.UpdateEvent{ObjectOld: cm("ns", name, "1"), ObjectNew: cm("ns", name, "2"), CatchUp: true}, q)
	}
	h.Update(ctx, handler.UpdateEvent{ObjectOld: cm("ns", "fresh", "1"), ObjectNew: cm("ns", "fresh", "3")}, q)
	h.Update(ctx, handler.UpdateEvent{ObjectOld: cm("ns", "b3", "2"), ObjectNew: cm("ns", "b3", "4")}, q)
	require.Equal(t, 5, q.Len())

	var got []string
	for range 5 {
		r, shutdown := q.Get()
		require.False(t, shutdown)
		got = append(got, r.Name)
		q.Done(r)
	}
	assert.Equal(t, []string{"fresh", "b3", "b1", "b2", "b4"}, got)
}
