package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	webappv1 "example.com/guestbook/api/v1"
)

const guestbookFinalizer = "webapp.example.com/finalizer"

// GuestbookReconciler reconciles a Guestbook object
type GuestbookReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder record.EventRecorder
}

// +kubebuilder:rbac:groups=webapp.example.com,resources=guestbooks,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=webapp.example.com,resources=guestbooks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=webapp.example.com,resources=guestbooks/finalizers,verbs=update
// +kubebuilder:rbac:groups=core,resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile moves the cluster state closer to the desired state.
func (r *GuestbookReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)

	guestbook := &webappv1.Guestbook{}
	if err := r.Get(ctx, req.NamespacedName, guestbook); err != nil {
		if apierrors.IsNotFound(err) {
			log.Info("Guestbook not found; it must have been deleted")
			return ctrl.Result{}, nil
		}
		log.Error(err, "Failed to get Guestbook")
		return ctrl.Result{}, err
	}

	if !guestbook.DeletionTimestamp.IsZero() {
		if controllerutil.ContainsFinalizer(guestbook, guestbookFinalizer) {
			r.Recorder.Event(guestbook, corev1.EventTypeWarning, "Deleting", "Cleaning up the guestbook")
			controllerutil.RemoveFinalizer(guestbook, guestbookFinalizer)
			if err := r.Update(ctx, guestbook); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, nil
	}

	if controllerutil.AddFinalizer(guestbook, guestbookFinalizer) {
		if err := r.Update(ctx, guestbook); err != nil {
			return ctrl.Result{}, err
		}
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: guestbook.Name + "-config", Namespace: guestbook.Namespace}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"title": guestbook.Spec.Title}
		return ctrl.SetControllerReference(guestbook, cm, r.Scheme)
	})
	if err != nil {
		log.Error(err, "Failed to reconcile the ConfigMap")
		return ctrl.Result{}, err
	}
	if op != controllerutil.OperationResultNone {
		r.Recorder.Eventf(guestbook, corev1.EventTypeNormal, "Configured", "ConfigMap %s %s", cm.Name, op)
	}

	meta.SetStatusCondition(&guestbook.Status.Conditions, metav1.Condition{
		Type:    "Available",
		Status:  metav1.ConditionTrue,
		Reason:  "Reconciled",
		Message: "The ConfigMap is up to date",
	})
	guestbook.Status.ConfigMapName = cm.Name
	if err := r.Status().Update(ctx, guestbook); err != nil {
		log.Error(err, "Failed to update the Guestbook status")
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// SetupWithManager sets up the controller with the Manager.
func (r *GuestbookReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&webappv1.Guestbook{}).
		Owns(&corev1.ConfigMap{}).
		Named("guestbook").
		Complete(r)
}
