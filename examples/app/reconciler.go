package app

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/controller/controllerutil"
	appv1 "github.com/kubeloop/kubeloop/examples/app/api/v1"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// Finalizer is the App's finalizer: the App stays until its children are
// deleted.
const Finalizer = "examples.kubeloop.dev/cleanup"

// Condition types the App reports.
const (
	ConditionAvailable   = "Available"
	ConditionProgressing = "Progressing"
)

// Reconciler reconciles Apps.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
}

// SetupWithManager registers the App controller with mgr: it watches Apps
// and the Deployments and Services they own.
func SetupWithManager(mgr *manager.Manager) error {
	return builder.ControllerManagedBy(mgr).
		For(&appv1.App{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Complete(&Reconciler{Client: mgr.GetClient()})
}

// Reconcile brings one App's children and status in line with its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var app appv1.App
	if err := r.Client.Get(ctx, req.NamespacedName, &app); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !app.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.finalize(ctx, &app)
	}
	if controllerutil.AddFinalizer(&app, Finalizer) {
		if err := r.Client.Update(ctx, &app); err != nil {
			return reconcile.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
	}

	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, deploy, func() error {
		desiredDeployment(&app, deploy)
		return controllerutil.SetControllerReference(&app, deploy, r.Client.Scheme())
	}); err != nil {
		return reconcile.Result{}, fmt.Errorf("deployment: %w", err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, svc, func() error {
		desiredService(&app, svc)
		return controllerutil.SetControllerReference(&app, svc, r.Client.Scheme())
	}); err != nil {
		return reconcile.Result{}, fmt.Errorf("service: %w", err)
	}
	return reconcile.Result{}, r.updateStatus(ctx, &app, deploy)
}

// finalize deletes the App's children, then lets the App go.
func (r *Reconciler) finalize(ctx context.Context, app *appv1.App) error {
	if !controllerutil.ContainsFinalizer(app, Finalizer) {
		return nil
	}
	meta := metav1.ObjectMeta{Namespace: app.Namespace, Name: app.Name}
	for _, child := range []client.Object{&appsv1.Deployment{ObjectMeta: meta}, &corev1.Service{ObjectMeta: meta}} {
		if err := r.Client.Delete(ctx, child); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("cleanup: %w", err)
		}
	}
	controllerutil.RemoveFinalizer(app, Finalizer)
	// NotFound: a previous round already let the App go.
	if err := r.Client.Update(ctx, app); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	return nil
}

func (r *Reconciler) updateStatus(ctx context.Context, app *appv1.App, deploy *appsv1.Deployment) error {
	want := app.Status.DeepCopy()
	want.ObservedGeneration = app.Generation
	want.ReadyReplicas = deploy.Status.ReadyReplicas
	replicas := replicasOf(app)
	available := metav1.Condition{Type: ConditionAvailable, Status: metav1.ConditionFalse, Reason: "Waiting",
		Message: fmt.Sprintf("%d of %d replicas ready", want.ReadyReplicas, replicas), ObservedGeneration: app.Generation}
	if want.ReadyReplicas >= replicas {
		available.Status, available.Reason = metav1.ConditionTrue, "ReplicasReady"
	}
	progressing := metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionFalse, Reason: "RolledOut",
		Message: "the Deployment matches the spec", ObservedGeneration: app.Generation}
	if deploy.Status.ObservedGeneration < deploy.Generation || deploy.Status.UpdatedReplicas < replicas {
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionTrue, "RollingOut", "the Deployment is rolling out"
	}
	meta.SetStatusCondition(&want.Conditions, available)
	meta.SetStatusCondition(&want.Conditions, progressing)
	if equality.Semantic.DeepEqual(&app.Status, want) {
		return nil
	}
	app.Status = *want
	if err := r.Client.Status().Update(ctx, app); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	return nil
}

func replicasOf(app *appv1.App) int32 {
	if app.Spec.Replicas == nil {
		return 1
	}
	return *app.Spec.Replicas
}

func portOf(app *appv1.App) int32 {
	if app.Spec.Port == 0 {
		return 8080
	}
	return app.Spec.Port
}

func labelsOf(app *appv1.App) map[string]string {
	return map[string]string{"app.kubernetes.io/name": app.Name, "app.kubernetes.io/managed-by": "kubeloop-app-operator"}
}

// desiredDeployment sets the fields of d that the App owns, leaving the
// rest (defaults the API server filled in) alone.
func desiredDeployment(app *appv1.App, d *appsv1.Deployment) {
	labels := labelsOf(app)
	d.Labels = labels
	replicas := replicasOf(app)
	d.Spec.Replicas = &replicas
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	d.Spec.Template.Labels = labels
	container := corev1.Container{Name: "app", Image: app.Spec.Image,
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: portOf(app), Protocol: corev1.ProtocolTCP}}}
	if len(d.Spec.Template.Spec.Containers) == 1 {
		// Keep server-side defaults (pull policy, termination paths) and
		// change only what the App decides.
		c := &d.Spec.Template.Spec.Containers[0]
		c.Name, c.Image, c.Ports = container.Name, container.Image, container.Ports
		return
	}
	d.Spec.Template.Spec.Containers = []corev1.Container{container}
}

func desiredService(app *appv1.App, s *corev1.Service) {
	s.Labels = labelsOf(app)
	s.Spec.Selector = labelsOf(app)
	port := portOf(app)
	s.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}}
}
