package builder_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// errorLog records every line logged at ERROR.
type errorLog struct {
	mu    sync.Mutex
	lines []string
}

// errorSink wraps a logger so that Error calls are recorded whatever the
// formatting.
type errorSink struct {
	logr.LogSink
	log *errorLog
}

func (s errorSink) Error(err error, msg string, kv ...any) {
	s.log.mu.Lock()
	s.log.lines = append(s.log.lines, fmt.Sprintf("%s: %v %v", msg, err, kv))
	s.log.mu.Unlock()
	s.LogSink.Error(err, msg, kv...)
}
func (s errorSink) WithValues(kv ...any) logr.LogSink {
	return errorSink{LogSink: s.LogSink.WithValues(kv...), log: s.log}
}
func (s errorSink) WithName(n string) logr.LogSink {
	return errorSink{LogSink: s.LogSink.WithName(n), log: s.log}
}

func (l *errorLog) recording(t *testing.T) logr.Logger {
	base := funcr.New(func(prefix, args string) { t.Log(prefix, args) }, funcr.Options{})
	return logr.New(errorSink{LogSink: base.GetSink(), log: l})
}

func (l *errorLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// widgetCRD returns a namespaced CRD of kind Widget in group.
func widgetCRD(group string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets." + group},
		"spec": map[string]any{
			"group": group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
}

func widget(group, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"})
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// deleteCRD deletes a CRD and waits until the API server has removed it
// (after deleting its objects).
func deleteCRD(t *testing.T, live client.Client, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait) // also from Cleanup
	defer cancel()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	crd.SetName(name)
	require.NoError(t, client.IgnoreNotFound(live.Delete(ctx, crd)))
	require.Eventually(t, func() bool {
		err := live.Get(ctx, client.ObjectKey{Name: name}, crd)
		return apierrors.IsNotFound(err)
	}, wait, 50*time.Millisecond, "CRD %s not deleted", name)
}

// names counts the reconciles of each name.
type names struct {
	mu sync.Mutex
	m  map[string]int
}

func (n *names) add(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[string]int{}
	}
	n.m[name]++
}

// has returns a condition: name has been reconciled.
func (n *names) has(name string) func() bool {
	return func() bool { n.mu.Lock(); defer n.mu.Unlock(); return n.m[name] > 0 }
}

// reconciler counts each Request's name.
func (n *names) reconciler() reconcile.Func {
	return func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		n.add(req.Name)
		return reconcile.Result{}, nil
	}
}

// startUntilCleanup starts mgr until the test ends, then deletes the CRD
// named crd.
func startUntilCleanup(t *testing.T, mgr *manager.Manager, live client.Client, crd string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
		deleteCRD(t, live, crd)
	})
}

// readyz returns the status and body of /readyz?verbose.
func readyz(t *testing.T, mgr *manager.Manager) (int, string) {
	t.Helper()
	addr := mgr.HealthProbeAddr()
	if addr == nil {
		return 0, "" // not serving yet
	}
	resp, err := http.Get("http://" + addr.String() + "/readyz?verbose")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// waitingGauge returns kubeloop_source_waiting{controller,kind}, or -1.
func waitingGauge(t *testing.T, reg *prometheus.Registry, controller, kind string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "kubeloop_source_waiting" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] == controller && labels["kind"] == kind {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

// holdsKind reports whether the cache has an informer of kind in group.
func holdsKind(c cache.Cache, group, kind string) bool {
	for _, s := range c.(*cache.InformerCache).Sizes() {
		if s.Group == group && s.Kind == kind {
			return true
		}
	}
	return false
}

// TestWaitForCRDFollowsTheCRD: a manager starts with a controller For a
// kind whose CRD is not installed, and is ready with the kind reported
// waiting (readiness and metric); installing the CRD starts the informer
// and its objects are reconciled; deleting it removes the informer and the
// kind waits again; installing it again works again. Nothing is logged at
// ERROR throughout.
func TestWaitForCRDFollowsTheCRD(t *testing.T) {
	suffix := string(uuid.NewUUID())[:8]
	group := "crdwait" + suffix + ".kubeloop.dev"
	kind := "Widget." + group
	name := "widget-" + suffix
	live, ns := newNamespace(t)

	var errs errorLog
	mgr, err := manager.New(cfg, manager.Options{Logger: errs.recording(t), HealthProbeBindAddress: "127.0.0.1:0"})
	require.NoError(t, err)

	var reconciled names
	r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		obj := widget(group, req.Namespace, req.Name)
		if err := mgr.GetClient().Get(ctx, req.NamespacedName, obj); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		reconciled.add(req.Name)
		return reconcile.Result{}, nil
	})
	seen := reconciled.has
	ctrl, err := builder.ControllerManagedBy(mgr).
		For(widget(group, "", ""), builder.WaitForCRD).
		Named(name).
		Build(r)
	require.NoError(t, err, "WaitForCRD: an uninstalled kind does not fail Build")

	// A second controller reconciles ConfigMaps and Watches Widgets (the
	// same informer as the first's For), mapping each to the ConfigMap of
	// its name: its own Requests are never dropped while Widgets wait.
	var cmSeen names
	toConfigMap := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: "cm-" + obj.GetName()}}}
	})
	watcher, err := builder.ControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == ns }))).
		Watches(widget(group, "", ""), toConfigMap, builder.WaitForCRD).
		Named(name + "-watcher").
		Build(cmSeen.reconciler())
	require.NoError(t, err)
	cmSeenOf := cmSeen.has

	startUntilCleanup(t, mgr, live, "widgets."+group)

	waitingReported := func() bool {
		code, body := readyz(t, mgr)
		return code == http.StatusOK &&
			strings.Contains(body, "[+]crd-sources ok: waiting for kinds to be served: "+kind+" (controller "+name+")") &&
			waitingGauge(t, mgr.MetricsRegistry(), name, kind) == 1
	}
	servedReported := func() bool {
		code, body := readyz(t, mgr)
		return code == http.StatusOK && strings.Contains(body, "[+]crd-sources ok\n") &&
			waitingGauge(t, mgr.MetricsRegistry(), name, kind) == 0
	}

	// Not installed: ready, and the kind is reported waiting.
	require.Eventually(t, waitingReported, wait, 50*time.Millisecond, "ready with the kind waiting")
	assert.Equal(t, []string{kind}, ctrl.WaitingKinds())
	assert.False(t, holdsKind(mgr.GetCache(), group, "Widget"), "no informer while the CRD is absent")
	assert.True(t, holdsKind(mgr.GetCache(), "apiextensions.k8s.io", "CustomResourceDefinition"))
	assert.NoError(t, mgr.GetCache().Healthy())
	assert.Equal(t, []string{kind}, watcher.WaitingKinds())
	require.NoError(t, live.Create(t.Context(), configMap(ns, "plain")))
	require.Eventually(t, cmSeenOf("plain"), wait, 20*time.Millisecond, "a Watches kind that waits drops nothing of the For kind")

	for round, obj := range []string{"first", "second"} {
		// Installed: the informer starts and objects are reconciled.
		require.NoError(t, applyCRD(t, widgetCRD(group)), "round %d", round)
		require.NoError(t, live.Create(t.Context(), widget(group, ns, obj)))
		require.Eventually(t, seen(obj), wait, 20*time.Millisecond, "round %d: %s reconciled", round, obj)
		require.Eventually(t, cmSeenOf("cm-"+obj), wait, 20*time.Millisecond, "round %d: %s mapped by the watcher", round, obj)
		assert.Empty(t, watcher.WaitingKinds())
		require.Eventually(t, servedReported, wait, 50*time.Millisecond, "round %d: served reported", round)
		assert.Empty(t, ctrl.WaitingKinds())
		assert.True(t, holdsKind(mgr.GetCache(), group, "Widget"))

		// Deleted: the informer stops, the kind waits again.
		deleteCRD(t, live, "widgets."+group)
		require.Eventually(t, waitingReported, wait, 50*time.Millisecond, "round %d: waiting again", round)
		assert.Equal(t, []string{kind}, ctrl.WaitingKinds())
		require.Eventually(t, func() bool { return len(watcher.WaitingKinds()) == 1 }, wait, 20*time.Millisecond, "round %d: the watcher waits too", round)
		assert.False(t, holdsKind(mgr.GetCache(), group, "Widget"), "round %d: informer removed", round)
		assert.NoError(t, mgr.GetCache().Healthy(), "round %d: the removed kind is not failing", round)
	}

	// A read of the kind while it is gone fails with the kind named; the
	// controller drops its queue meanwhile.
	err = mgr.GetClient().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "first"}, widget(group, "", ""))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Widget")

	assert.Empty(t, errs.all(), "nothing logged at ERROR")
}

// applyCRD installs crd and waits until it is served.
func applyCRD(t *testing.T, crd *unstructured.Unstructured) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	return envtest.ApplyCRDs(ctx, cfg, crd)
}

// TestWithoutWaitForCRDBuildFailsNamingTheKind: without the option, an
// uninstalled kind fails Build with an error naming it, as before.
func TestWithoutWaitForCRDBuildFailsNamingTheKind(t *testing.T) {
	group := "crdabsent" + string(uuid.NewUUID())[:8] + ".kubeloop.dev"
	mgr, err := manager.New(cfg, manager.Options{Logger: logr.Discard()})
	require.NoError(t, err)
	_, err = builder.ControllerManagedBy(mgr).
		For(widget(group, "", "")).
		Named("absent").
		Build(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Widget")
	assert.Contains(t, err.Error(), group)
}
