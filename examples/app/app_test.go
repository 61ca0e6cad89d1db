package app_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/examples/app"
	appv1 "github.com/kubeloop/kubeloop/examples/app/api/v1"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/manager"
)

var (
	scheme = runtime.NewScheme()
	// c reads and writes straight to the API server: the test checks what
	// the server holds.
	c client.Client
)

func TestMain(m *testing.M) {
	stop := func() error { return nil } // the manager's, once it runs
	testenv.Main(m, testenv.Options{
		Env: &envtest.Environment{CRDDirectoryPaths: []string{"config"}},
		Setup: func(cfg *rest.Config) error {
			if err := clientgoscheme.AddToScheme(scheme); err != nil {
				return err
			}
			if err := appv1.AddToScheme(scheme); err != nil {
				return err
			}
			var err error
			if c, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
				return err
			}
			mgr, err := manager.New(cfg, manager.Options{Scheme: scheme, Logger: testenv.Logger()})
			if err != nil {
				return err
			}
			if err := app.SetupWithManager(mgr); err != nil {
				return err
			}
			stop = testenv.Start(mgr)
			return nil
		},
		Teardown: func() error { return stop() },
	})
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "app-"}}
	require.NoError(t, c.Create(t.Context(), ns))
	return ns.Name
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 30*time.Second, 50*time.Millisecond, what)
}

func createApp(t *testing.T, ns string, replicas int32) *appv1.App {
	t.Helper()
	a := &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appv1.AppSpec{Image: "nginx:1.27", Replicas: &replicas, Port: 80}}
	require.NoError(t, c.Create(t.Context(), a))
	return a
}

func TestAppOwnsDeploymentAndService(t *testing.T) {
	ctx := t.Context()
	a := createApp(t, newNamespace(t), 2)
	key := client.ObjectKeyFromObject(a)

	var d appsv1.Deployment
	eventually(t, "the Deployment is created", func() bool { return c.Get(ctx, key, &d) == nil })
	assert.Equal(t, "nginx:1.27", d.Spec.Template.Spec.Containers[0].Image)
	assert.Equal(t, int32(2), *d.Spec.Replicas)
	assert.Equal(t, int32(80), d.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort)
	require.NotNil(t, metav1.GetControllerOf(&d))
	assert.Equal(t, "App", metav1.GetControllerOf(&d).Kind)

	var s corev1.Service
	// The reconciler writes the Deployment first, the Service second.
	eventually(t, "the Service is created", func() bool { return c.Get(ctx, key, &s) == nil })
	assert.Equal(t, int32(80), s.Spec.Ports[0].Port)
	assert.Equal(t, "web", s.Spec.Selector["app.kubernetes.io/name"])

	var got appv1.App
	eventually(t, "the status is written", func() bool {
		require.NoError(t, c.Get(ctx, key, &got))
		return got.Status.ObservedGeneration == got.Generation && apimeta.IsStatusConditionFalse(got.Status.Conditions, app.ConditionAvailable)
	})
	assert.Contains(t, got.Finalizers, app.Finalizer)
}

func TestStatusFollowsDeployment(t *testing.T) {
	ctx := t.Context()
	a := createApp(t, newNamespace(t), 2)
	key := client.ObjectKeyFromObject(a)
	var d appsv1.Deployment
	eventually(t, "the Deployment is created", func() bool { return c.Get(ctx, key, &d) == nil })

	// No kubelet runs here: write the status a Deployment controller would.
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}
	require.NoError(t, c.Status().Update(ctx, &d))

	var got appv1.App
	eventually(t, "the App reports ready replicas", func() bool {
		require.NoError(t, c.Get(ctx, key, &got))
		return got.Status.ReadyReplicas == 2 && apimeta.IsStatusConditionTrue(got.Status.Conditions, app.ConditionAvailable)
	})
	assert.True(t, apimeta.IsStatusConditionFalse(got.Status.Conditions, app.ConditionProgressing))
}

func TestSpecChangeRollsThrough(t *testing.T) {
	ctx := t.Context()
	a := createApp(t, newNamespace(t), 1)
	key := client.ObjectKeyFromObject(a)
	var d appsv1.Deployment
	eventually(t, "the Deployment is created", func() bool { return c.Get(ctx, key, &d) == nil })

	require.NoError(t, c.Get(ctx, key, a))
	three := int32(3)
	a.Spec.Image, a.Spec.Replicas, a.Spec.Port = "nginx:1.28", &three, 8081
	require.NoError(t, c.Update(ctx, a))

	eventually(t, "the Deployment follows the spec", func() bool {
		require.NoError(t, c.Get(ctx, key, &d))
		return d.Spec.Template.Spec.Containers[0].Image == "nginx:1.28" && *d.Spec.Replicas == 3
	})
	var s corev1.Service
	eventually(t, "the Service follows the port", func() bool {
		require.NoError(t, c.Get(ctx, key, &s))
		return s.Spec.Ports[0].Port == 8081
	})
	var got appv1.App
	eventually(t, "the status observes the new generation", func() bool {
		require.NoError(t, c.Get(ctx, key, &got))
		return got.Status.ObservedGeneration == got.Generation
	})
}

func TestDeletedChildComesBack(t *testing.T) {
	ctx := t.Context()
	a := createApp(t, newNamespace(t), 1)
	key := client.ObjectKeyFromObject(a)
	var d appsv1.Deployment
	eventually(t, "the Deployment is created", func() bool { return c.Get(ctx, key, &d) == nil })
	oldUID := d.UID
	require.NoError(t, c.Delete(ctx, &d))
	eventually(t, "a new Deployment replaces the deleted one", func() bool {
		return c.Get(ctx, key, &d) == nil && d.UID != oldUID
	})
}

func TestFinalizerCleansUp(t *testing.T) {
	ctx := t.Context()
	a := createApp(t, newNamespace(t), 1)
	key := client.ObjectKeyFromObject(a)
	eventually(t, "the finalizer and children exist", func() bool {
		var got appv1.App
		return c.Get(ctx, key, &got) == nil && len(got.Finalizers) == 1 &&
			c.Get(ctx, key, &appsv1.Deployment{}) == nil && c.Get(ctx, key, &corev1.Service{}) == nil
	})
	require.NoError(t, c.Delete(ctx, a))
	// No garbage collector runs here: the children disappear only because
	// the finalizer deleted them.
	eventually(t, "the App and its children are gone", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, key, &appv1.App{})) &&
			apierrors.IsNotFound(c.Get(ctx, key, &appsv1.Deployment{})) &&
			apierrors.IsNotFound(c.Get(ctx, key, &corev1.Service{}))
	})
}
