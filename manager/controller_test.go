package manager_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// A builder-built controller runs through the manager: it starts once
// elected, reads from the cache, writes to the API server, emits events
// and reports its metrics on the manager's registry.
func TestBuilderControllerRunsInManager(t *testing.T) {
	ctx := context.Background()
	admin := newManager(t, restConfig, manager.Options{}) // writes need no Start
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "controller-"}}
	require.NoError(t, admin.GetClient().Create(ctx, ns))

	opts := electionOptions(unique("builder-controller"), true)
	opts.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{ns.Name: {}}}
	mgr := newManager(t, restConfig, opts)
	recorder := mgr.GetEventRecorder("stamper")
	var reconciles atomic.Int32
	err := builder.ControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		Named("stamper").
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			reconciles.Add(1)
			var cm corev1.ConfigMap
			if err := mgr.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			if cm.Annotations["stamped"] == "yes" {
				return reconcile.Result{}, nil
			}
			if cm.Annotations == nil {
				cm.Annotations = map[string]string{}
			}
			cm.Annotations["stamped"] = "yes"
			if err := mgr.GetClient().Update(ctx, &cm); err != nil {
				return reconcile.Result{}, err
			}
			recorder.Eventf(&cm, nil, corev1.EventTypeNormal, "Stamped", "Stamp", "stamped %s", cm.Name)
			return reconcile.Result{}, nil
		}))
	require.NoError(t, err)
	err = builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("stamper").Complete(reconcile.Func(
		func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `controller name "stamper" is already used by this manager`)

	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	waitClosed(t, mgr.Elected(), 30*time.Second, "elected")

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "one"}}
	require.NoError(t, mgr.GetClient().Create(ctx, cm))
	require.Eventually(t, func() bool {
		var got corev1.ConfigMap
		err := mgr.GetAPIReader().Get(ctx, client.ObjectKeyFromObject(cm), &got)
		return err == nil && got.Annotations["stamped"] == "yes"
	}, 30*time.Second, 20*time.Millisecond)
	assert.Positive(t, reconciles.Load())

	mfs, err := mgr.MetricsRegistry().Gather()
	require.NoError(t, err)
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	for _, want := range []string{"controller_runtime_reconcile_total", "workqueue_adds_total", "rest_client_requests_total", "leader_election_master_status"} {
		assert.True(t, names[want], "registry lacks %s", want)
	}

	require.Eventually(t, func() bool {
		var list corev1.EventList // core/v1 view of events.k8s.io events
		if err := mgr.GetAPIReader().List(ctx, &list, client.InNamespace(ns.Name)); err != nil {
			return false
		}
		for _, e := range list.Items {
			if e.Reason == "Stamped" && strings.Contains(e.Message, "stamped one") {
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond)
}
