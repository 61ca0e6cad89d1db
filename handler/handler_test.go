package handler_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
)

func req(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

func normal(ns, name string) added { return added{req: req(ns, name)} }
func low(ns, name string) added    { return added{req: req(ns, name), priority: handler.LowPriority} }

func cm(ns, name, rv string, owners ...metav1.OwnerReference) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv, OwnerReferences: owners}}
}

// event is one call to an EventHandler.
type event func(context.Context, handler.EventHandler, handler.Queue)

func create(obj client.Object, initial bool) event {
	return func(ctx context.Context, h handler.EventHandler, q handler.Queue) {
		h.Create(ctx, handler.CreateEvent{Object: obj, IsInInitialList: initial}, q)
	}
}

func update(oldObj, newObj client.Object) event {
	return func(ctx context.Context, h handler.EventHandler, q handler.Queue) {
		h.Update(ctx, handler.UpdateEvent{ObjectOld: oldObj, ObjectNew: newObj}, q)
	}
}

func del(obj client.Object) event {
	return func(ctx context.Context, h handler.EventHandler, q handler.Queue) {
		h.Delete(ctx, handler.DeleteEvent{Object: obj}, q)
	}
}

func generic(obj client.Object) event {
	return func(ctx context.Context, h handler.EventHandler, q handler.Queue) {
		h.Generic(ctx, handler.GenericEvent{Object: obj}, q)
	}
}

type handlerCase struct {
	name string
	give event
	want []added
}

func runCases(t *testing.T, h handler.EventHandler, tests []handlerCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &recordingQueue{}
			tt.give(t.Context(), h, q)
			assert.Equal(t, tt.want, q.adds)
		})
	}
}

func TestEnqueueRequestForObject(t *testing.T) {
	runCases(t, &handler.EnqueueRequestForObject{}, []handlerCase{
		{name: "create", give: create(cm("ns", "a", "1"), false), want: []added{normal("ns", "a")}},
		{name: "create from initial list is low priority", give: create(cm("ns", "a", "1"), true), want: []added{low("ns", "a")}},
		{name: "create without object", give: create(nil, false), want: nil},
		{name: "update enqueues new", give: update(cm("ns", "old", "1"), cm("ns", "new", "2")), want: []added{normal("ns", "new")}},
		{name: "update without new enqueues old", give: update(cm("ns", "old", "1"), nil), want: []added{normal("ns", "old")}},
		{name: "resync is low priority", give: update(cm("ns", "a", "5"), cm("ns", "a", "5")), want: []added{low("ns", "a")}},
		{name: "update without objects", give: update(nil, nil), want: nil},
		{name: "delete", give: del(cm("ns", "a", "1")), want: []added{normal("ns", "a")}},
		{name: "delete without object", give: del(nil), want: nil},
		{name: "generic", give: generic(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}), want: []added{normal("", "n1")}},
	})
}

func ref(apiVersion, kind, name string, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(name), Controller: &controller}
}

func ownerScheme(t *testing.T) (*runtime.Scheme, meta.RESTMapper) {
	t.Helper()
	s := runtime.NewScheme()
	assert.NoError(t, appsv1.AddToScheme(s))
	assert.NoError(t, corev1.AddToScheme(s))
	assert.NoError(t, rbacv1.AddToScheme(s))
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), meta.RESTScopeNamespace)
	m.Add(rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), meta.RESTScopeRoot)
	return s, m
}

func TestEnqueueRequestForOwner(t *testing.T) {
	s, m := ownerScheme(t)
	rsCtl := ref("apps/v1", "ReplicaSet", "rs-ctl", true)
	rsOther := ref("apps/v1", "ReplicaSet", "rs-other", false)
	rsOldVersion := ref("apps/v1beta2", "ReplicaSet", "rs-beta", true)
	wrongGroup := ref("example.com/v1", "ReplicaSet", "rs-foreign", true)
	deploy := ref("apps/v1", "Deployment", "deploy", true)

	t.Run("controller owner by default", func(t *testing.T) {
		runCases(t, handler.EnqueueRequestForOwner(s, m, &appsv1.ReplicaSet{}), []handlerCase{
			{name: "create", give: create(cm("ns", "p", "1", rsOther, rsCtl, deploy), false), want: []added{normal("ns", "rs-ctl")}},
			{name: "initial list is low", give: create(cm("ns", "p", "1", rsCtl), true), want: []added{low("ns", "rs-ctl")}},
			{name: "no owners", give: create(cm("ns", "p", "1"), false), want: nil},
			{name: "other group ignored", give: create(cm("ns", "p", "1", wrongGroup), false), want: nil},
			{name: "other version matches", give: create(cm("ns", "p", "1", rsOldVersion), false), want: []added{normal("ns", "rs-beta")}},
			{name: "delete", give: del(cm("ns", "p", "1", rsCtl)), want: []added{normal("ns", "rs-ctl")}},
			{name: "generic", give: generic(cm("ns", "p", "1", rsCtl)), want: []added{normal("ns", "rs-ctl")}},
			{name: "update of owner enqueues old and new owner",
				give: update(cm("ns", "p", "1", rsCtl), cm("ns", "p", "2", ref("apps/v1", "ReplicaSet", "rs-new", true))),
				want: []added{{req: req("ns", "rs-ctl")}, {req: req("ns", "rs-new")}}},
			{name: "update with the same owner enqueues it once",
				give: update(cm("ns", "p", "1", rsCtl), cm("ns", "p", "2", rsCtl)), want: []added{normal("ns", "rs-ctl")}},
			{name: "resync is low", give: update(cm("ns", "p", "3", rsCtl), cm("ns", "p", "3", rsCtl)), want: []added{low("ns", "rs-ctl")}},
		})
	})
	t.Run("OnlyControllerOwner is the default", func(t *testing.T) {
		runCases(t, handler.EnqueueRequestForOwner(s, m, &appsv1.ReplicaSet{}, handler.OnlyControllerOwner()), []handlerCase{
			{name: "create", give: create(cm("ns", "p", "1", rsOther, rsCtl), false), want: []added{normal("ns", "rs-ctl")}},
		})
	})
	t.Run("AllOwners", func(t *testing.T) {
		runCases(t, handler.EnqueueRequestForOwner(s, m, &appsv1.ReplicaSet{}, handler.AllOwners()), []handlerCase{
			{name: "create", give: create(cm("ns", "p", "1", rsOther, rsCtl, deploy), false),
				want: []added{{req: req("ns", "rs-other")}, {req: req("ns", "rs-ctl")}}},
		})
	})
	t.Run("cluster-scoped owner", func(t *testing.T) {
		runCases(t, handler.EnqueueRequestForOwner(s, m, &rbacv1.ClusterRole{}), []handlerCase{
			{name: "create", give: create(cm("ns", "p", "1", ref("rbac.authorization.k8s.io/v1", "ClusterRole", "admin", true)), false),
				want: []added{normal("", "admin")}},
		})
	})
	t.Run("unmapped owner kind enqueues nothing", func(t *testing.T) {
		runCases(t, handler.EnqueueRequestForOwner(s, meta.NewDefaultRESTMapper(nil), &appsv1.ReplicaSet{}), []handlerCase{
			{name: "create", give: create(cm("ns", "p", "1", rsCtl), false), want: nil},
		})
	})
	t.Run("unknown owner type panics", func(t *testing.T) {
		assert.PanicsWithValue(t,
			"handler: EnqueueRequestForOwner: apiutil: type not registered in the scheme: *v1.ReplicaSet, a built-in kind (add k8s.io/client-go/kubernetes/scheme's AddToScheme to the scheme)",
			func() { handler.EnqueueRequestForOwner(runtime.NewScheme(), m, &appsv1.ReplicaSet{}) })
	})
}

func TestEnqueueRequestsFromMapFunc(t *testing.T) {
	// Each ConfigMap maps to the requests named in its "targets" data key.
	mapFn := func(_ context.Context, obj client.Object) []reconcile.Request {
		var out []reconcile.Request
		for _, name := range obj.(*corev1.ConfigMap).Data {
			out = append(out, req(obj.GetNamespace(), name))
		}
		return out
	}
	with := func(rv string, targets ...string) *corev1.ConfigMap {
		c := cm("ns", "src", rv)
		c.Data = map[string]string{}
		for i, tgt := range targets {
			c.Data[string(rune('a'+i))] = tgt
		}
		return c
	}
	runCases(t, handler.EnqueueRequestsFromMapFunc(mapFn), []handlerCase{
		{name: "create", give: create(with("1", "x"), false), want: []added{normal("ns", "x")}},
		{name: "initial list is low", give: create(with("1", "x"), true), want: []added{low("ns", "x")}},
		{name: "nothing mapped", give: create(with("1"), false), want: nil},
		{name: "update maps old and new", give: update(with("1", "x"), with("2", "y")),
			want: []added{{req: req("ns", "x")}, {req: req("ns", "y")}}},
		{name: "update dedups", give: update(with("1", "x"), with("2", "x")), want: []added{normal("ns", "x")}},
		{name: "resync is low", give: update(with("2", "x"), with("2", "x")), want: []added{low("ns", "x")}},
		{name: "delete", give: del(with("1", "x")), want: []added{normal("ns", "x")}},
		{name: "generic", give: generic(with("1", "x")), want: []added{normal("ns", "x")}},
		{name: "generic without object", give: generic(nil), want: nil},
	})
}

func TestFuncs(t *testing.T) {
	var calls []string
	h := handler.Funcs{
		CreateFunc: func(_ context.Context, e handler.CreateEvent, q handler.Queue) {
			calls = append(calls, "create")
			q.Add(req(e.Object.GetNamespace(), e.Object.GetName()))
		},
		DeleteFunc: func(context.Context, handler.DeleteEvent, handler.Queue) { calls = append(calls, "delete") },
	}
	q := &recordingQueue{}
	ctx := t.Context()
	h.Create(ctx, handler.CreateEvent{Object: cm("ns", "a", "1")}, q)
	h.Update(ctx, handler.UpdateEvent{}, q) // nil UpdateFunc: ignored
	h.Delete(ctx, handler.DeleteEvent{}, q)
	h.Generic(ctx, handler.GenericEvent{}, q) // nil GenericFunc: ignored
	assert.Equal(t, []string{"create", "delete"}, calls)
	assert.Equal(t, []added{normal("ns", "a")}, q.adds)
}

func TestWithLowPriorityWhenUnchanged(t *testing.T) {
	enqueueNew := handler.Funcs{
		CreateFunc: func(_ context.Context, e handler.CreateEvent, q handler.Queue) { q.Add(req("ns", e.Object.GetName())) },
		UpdateFunc: func(_ context.Context, e handler.UpdateEvent, q handler.Queue) {
			handler.AddWithOpts(q, workqueueOpts(), req("ns", e.ObjectNew.GetName()))
		},
	}
	runCases(t, handler.WithLowPriorityWhenUnchanged(enqueueNew), []handlerCase{
		{name: "create", give: create(cm("ns", "a", "1"), false), want: []added{normal("ns", "a")}},
		{name: "initial list", give: create(cm("ns", "a", "1"), true), want: []added{low("ns", "a")}},
		{name: "update", give: update(cm("ns", "a", "1"), cm("ns", "a", "2")), want: []added{normal("ns", "a")}},
		{name: "resync", give: update(cm("ns", "a", "2"), cm("ns", "a", "2")), want: []added{low("ns", "a")}},
	})
}
