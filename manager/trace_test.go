package manager_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/trace"
	"github.com/kubeloop/kubeloop/trace/tracetest"
)

// traceWait bounds the Eventually checks of the tracing tests.
const traceWait = 60 * time.Second

// tracedNamespace creates a namespace for a test and returns it with an
// admin client (live, no Tracer in its contexts).
func tracedNamespace(t *testing.T) (client.Client, string) {
	t.Helper()
	admin, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "trace-"}}
	require.NoError(t, admin.Create(t.Context(), ns))
	return admin, ns.Name
}

// reconcileLinking returns the reconcile spans with a link to the event of
// name at resourceVersion rv.
func reconcileLinking(rec *tracetest.Recorder, name, rv string) []*tracetest.Span {
	var out []*tracetest.Span
	for _, s := range rec.Reconciles() {
		for _, l := range s.Reconcile.Links {
			if l.Name == name && l.ResourceVersion == rv {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// TestTracedReconcileIsLinkedToItsWatchEvent: with manager.Options.Tracer,
// a ConfigMap change is one reconcile span linked to that watch event
// (its resourceVersion), and the reconciler's write inside it is a child
// span, while its cached read is not traced.
func TestTracedReconcileIsLinkedToItsWatchEvent(t *testing.T) {
	admin, ns := tracedNamespace(t)
	rec := &tracetest.Recorder{}
	mgr := newManager(t, restConfig, manager.Options{
		Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Tracer: rec,
	})
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("traced-stamper").
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var cm corev1.ConfigMap
			if err := mgr.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil { // the cache: no span
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			if cm.Annotations["stamped"] == "yes" {
				return reconcile.Result{}, nil
			}
			cm.Annotations = map[string]string{"stamped": "yes"}
			return reconcile.Result{}, mgr.GetClient().Update(ctx, &cm) // a live write: a child span
		})))
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	// A first object reconciled means the controller's cache has synced:
	// what is created next comes as a watch event, not in the initial list.
	warm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "warm"}}
	require.NoError(t, admin.Create(t.Context(), warm))
	require.Eventually(t, func() bool {
		for _, s := range rec.Reconciles() {
			if _, ended := s.Ended(); ended && s.Reconcile.Name == "warm" {
				return true
			}
		}
		return false
	}, traceWait, 20*time.Millisecond, "the first object reconciled")

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "one"}}
	require.NoError(t, admin.Create(t.Context(), cm))
	created := cm.ResourceVersion
	require.Eventually(t, func() bool {
		spans := reconcileLinking(rec, "one", created)
		if len(spans) != 1 {
			return false
		}
		_, ended := spans[0].Ended()
		return ended
	}, traceWait, 20*time.Millisecond, "a reconcile linked to the create event")
	span := reconcileLinking(rec, "one", created)[0]
	assert.Equal(t, "traced-stamper", span.Reconcile.Controller)
	assert.Equal(t, ns, span.Reconcile.Namespace)
	assert.Equal(t, "one", span.Reconcile.Name)
	var link trace.Event
	for _, l := range span.Reconcile.Links {
		if l.ResourceVersion == created {
			link = l
		}
	}
	assert.Equal(t, trace.EventCreate, link.Type)
	assert.Equal(t, "ConfigMap", link.Kind)
	assert.False(t, link.InitialList, "created after the cache synced: a watch event")
	assert.NotNil(t, link.Link, "the Tracer's own value for the event travels with it")

	children := rec.Children(span)
	require.Len(t, children, 1, "the update is the one request sent; the cached Get sent none")
	call := children[0].Call
	require.NotNil(t, call)
	assert.Equal(t, "update", call.Verb)
	assert.Equal(t, "configmaps", call.Resource)
	assert.Equal(t, ns, call.Namespace)
	assert.Equal(t, "one", call.Name)
	o, ended := children[0].Ended()
	assert.True(t, ended)
	assert.Equal(t, 200, o.StatusCode)

	// A change by someone else: one reconcile, linked to its event.
	var cur corev1.ConfigMap
	require.Eventually(t, func() bool {
		err := admin.Get(t.Context(), client.ObjectKeyFromObject(cm), &cur)
		return err == nil && cur.Annotations["stamped"] == "yes"
	}, traceWait, 20*time.Millisecond)
	cur.Data = map[string]string{"changed": "yes"}
	require.NoError(t, admin.Update(t.Context(), &cur))
	require.Eventually(t, func() bool { return len(reconcileLinking(rec, "one", cur.ResourceVersion)) > 0 },
		traceWait, 20*time.Millisecond, "a reconcile linked to the update event")
	spans := reconcileLinking(rec, "one", cur.ResourceVersion)
	assert.Len(t, spans, 1, "one reconcile per event")
	assert.Empty(t, rec.Children(spans[0]), "already stamped: no request sent")
}

// TestTracedCollapsedEventsAreBoundedLinks: events of one Request that
// arrive while it waits (here: while its first reconcile is held) become
// one reconcile linking the first MaxLinks-1 and the latest of them.
func TestTracedCollapsedEventsAreBoundedLinks(t *testing.T) {
	const updates = 20
	admin, ns := tracedNamespace(t)
	rec := &tracetest.Recorder{}
	mgr := newManager(t, restConfig, manager.Options{
		Cache:  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Tracer: rec,
	})
	held := make(chan struct{})
	release := make(chan struct{})
	first := true
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("traced-held").
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			if first {
				first = false
				close(held)
				<-release
			}
			return reconcile.Result{}, nil
		})))
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hot"}}
	require.NoError(t, admin.Create(t.Context(), cm))
	select {
	case <-held:
	case <-time.After(traceWait):
		t.Fatal("the first reconcile did not start")
	}
	var rvs []string
	for i := range updates {
		cm.Data = map[string]string{"n": fmt.Sprint(i)}
		require.NoError(t, admin.Update(t.Context(), cm))
		rvs = append(rvs, cm.ResourceVersion)
	}
	require.Eventually(t, func() bool {
		for _, ev := range rec.Events() {
			if ev.ResourceVersion == rvs[updates-1] {
				return true
			}
		}
		return false
	}, traceWait, 20*time.Millisecond, "the last update reached the handler")
	close(release)

	require.Eventually(t, func() bool { return len(rec.Reconciles()) >= 2 }, traceWait, 20*time.Millisecond)
	second := rec.Reconciles()[1].Reconcile
	var got []string
	for _, l := range second.Links {
		got = append(got, l.ResourceVersion)
	}
	want := append(append([]string(nil), rvs[:trace.MaxLinks-1]...), rvs[updates-1])
	assert.Equal(t, want, got, "the first MaxLinks-1 updates and the latest")
	assert.Equal(t, updates-trace.MaxLinks, second.DroppedLinks)
	assert.Len(t, rec.Reconciles(), 2, "twenty updates, one reconcile after the held one")
}

// TestUntracedControllerCallsNoTracer: a manager without a Tracer runs
// an untraced controller beside one given a Tracer of its own: the Tracer
// hears only of the traced one, and not of the untraced one's writes
// through the same client.
func TestUntracedControllerCallsNoTracer(t *testing.T) {
	admin, ns := tracedNamespace(t)
	rec := &tracetest.Recorder{}
	mgr := newManager(t, restConfig, manager.Options{
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	require.Nil(t, mgr.GetTracer())
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("untraced-writer").
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var cm corev1.ConfigMap
			if err := mgr.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			if cm.Annotations["written"] == "yes" {
				return reconcile.Result{}, nil
			}
			cm.Annotations = map[string]string{"written": "yes"}
			return reconcile.Result{}, mgr.GetClient().Update(ctx, &cm)
		})))
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("traced-reader").
		WithOptions(controller.Options{Tracer: rec}).
		Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, nil
		})))
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "both"}}
	require.NoError(t, admin.Create(t.Context(), cm))
	var written corev1.ConfigMap
	require.Eventually(t, func() bool {
		err := admin.Get(t.Context(), client.ObjectKeyFromObject(cm), &written)
		return err == nil && written.Annotations["written"] == "yes"
	}, traceWait, 20*time.Millisecond, "the untraced controller wrote")
	require.Eventually(t, func() bool { return len(reconcileLinking(rec, "both", written.ResourceVersion)) == 1 },
		traceWait, 20*time.Millisecond, "the traced controller saw the untraced one's write")

	for _, s := range rec.Reconciles() {
		assert.Equal(t, "traced-reader", s.Reconcile.Controller)
	}
	assert.Empty(t, rec.Calls(), "the untraced controller's write is not traced")
}
