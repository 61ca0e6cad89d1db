package manager_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/config"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

var noopReconciler = reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
	return reconcile.Result{}, nil
})

// TestControllerConfig checks Options.Controller: the manager hands it to
// its controllers, and its SkipNameValidation lets two controllers share
// a name, which the manager refuses otherwise.
func TestControllerConfig(t *testing.T) {
	cfg := config.Controller{SkipNameValidation: ptr.To(true), MaxConcurrentReconciles: 2, ReconciliationTimeout: time.Minute}
	mgr := newManager(t, restConfig, manager.Options{Controller: cfg})
	assert.Equal(t, cfg, mgr.GetControllerOptions())

	first, err := controller.New("twin", mgr, controller.Options{Reconciler: noopReconciler})
	require.NoError(t, err)
	assert.True(t, first.SkipNameValidation())
	_, err = controller.New("twin", mgr, controller.Options{Reconciler: noopReconciler})
	assert.NoError(t, err, "SkipNameValidation lets a second controller of the name in")
	err = builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("twin").Complete(noopReconciler)
	assert.NoError(t, err)

	_, err = controller.New("twin", mgr, controller.Options{Reconciler: noopReconciler, SkipNameValidation: ptr.To(false)})
	assert.ErrorContains(t, err, `controller name "twin" is already used by this manager`, "the controller's own false wins")

	plain := newManager(t, restConfig, manager.Options{})
	_, err = controller.New("once", plain, controller.Options{Reconciler: noopReconciler})
	require.NoError(t, err)
	_, err = controller.New("once", plain, controller.Options{Reconciler: noopReconciler})
	assert.ErrorContains(t, err, `controller name "once" is already used by this manager`)
}

func TestControllerConfigValidated(t *testing.T) {
	_, err := manager.New(restConfig, manager.Options{Controller: config.Controller{
		MaxConcurrentReconciles: -1, GroupKindConcurrency: map[string]int{"Deployment.apps": -3},
	}})
	require.Error(t, err)
	assert.ErrorContains(t, err, "config: Controller.MaxConcurrentReconciles -1 is negative")
	assert.ErrorContains(t, err, `config: Controller.GroupKindConcurrency["Deployment.apps"] -3 is negative`)
}
