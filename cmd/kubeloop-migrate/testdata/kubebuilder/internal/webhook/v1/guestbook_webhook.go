package v1

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	webappv1 "example.com/guestbook/api/v1"
)

// nolint:unused
// log is for logging in this package.
var guestbooklog = logf.Log.WithName("guestbook-resource")

// SetupGuestbookWebhookWithManager registers the webhook for Guestbook in the manager.
func SetupGuestbookWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr).For(&webappv1.Guestbook{}).
		WithValidator(&GuestbookCustomValidator{}).
		WithDefaulter(&GuestbookCustomDefaulter{DefaultReplicas: 1}).
		Complete()
}

// +kubebuilder:webhook:path=/mutate-webapp-example-com-v1-guestbook,mutating=true,failurePolicy=fail,sideEffects=None,groups=webapp.example.com,resources=guestbooks,verbs=create;update,versions=v1,name=mguestbook-v1.kb.io,admissionReviewVersions=v1

// GuestbookCustomDefaulter struct is responsible for setting default values on the custom resource of the
// Kind Guestbook when those are created or updated.
type GuestbookCustomDefaulter struct {
	DefaultReplicas int32
}

var _ webhook.CustomDefaulter = &GuestbookCustomDefaulter{}

// Default implements webhook.CustomDefaulter so a webhook will be registered for the Kind Guestbook.
func (d *GuestbookCustomDefaulter) Default(_ context.Context, obj runtime.Object) error {
	guestbook, ok := obj.(*webappv1.Guestbook)
	if !ok {
		return fmt.Errorf("expected an Guestbook object but got %T", obj)
	}
	guestbooklog.Info("Defaulting for Guestbook", "name", guestbook.GetName())

	if guestbook.Spec.Replicas == 0 {
		guestbook.Spec.Replicas = d.DefaultReplicas
	}
	return nil
}

// +kubebuilder:webhook:path=/validate-webapp-example-com-v1-guestbook,mutating=false,failurePolicy=fail,sideEffects=None,groups=webapp.example.com,resources=guestbooks,verbs=create;update,versions=v1,name=vguestbook-v1.kb.io,admissionReviewVersions=v1

// GuestbookCustomValidator struct is responsible for validating the Guestbook resource
// when it is created, updated, or deleted.
type GuestbookCustomValidator struct{}

var _ webhook.CustomValidator = &GuestbookCustomValidator{}

// ValidateCreate implements webhook.CustomValidator so a webhook will be registered for the type Guestbook.
func (v *GuestbookCustomValidator) ValidateCreate(_ context.Context, obj runtime.Object) (admission.Warnings, error) {
	guestbook, ok := obj.(*webappv1.Guestbook)
	if !ok {
		return nil, fmt.Errorf("expected a Guestbook object but got %T", obj)
	}
	guestbooklog.Info("Validation for Guestbook upon creation", "name", guestbook.GetName())
	return nil, validateGuestbook(guestbook)
}

// ValidateUpdate implements webhook.CustomValidator so a webhook will be registered for the type Guestbook.
func (v *GuestbookCustomValidator) ValidateUpdate(_ context.Context, oldObj, newObj runtime.Object) (admission.Warnings, error) {
	guestbook, ok := newObj.(*webappv1.Guestbook)
	if !ok {
		return nil, fmt.Errorf("expected a Guestbook object for the newObj but got %T", newObj)
	}
	guestbooklog.Info("Validation for Guestbook upon update", "name", guestbook.GetName())
	return nil, validateGuestbook(guestbook)
}

// ValidateDelete implements webhook.CustomValidator so a webhook will be registered for the type Guestbook.
func (v *GuestbookCustomValidator) ValidateDelete(_ context.Context, obj runtime.Object) (admission.Warnings, error) {
	guestbook, ok := obj.(*webappv1.Guestbook)
	if !ok {
		return nil, fmt.Errorf("expected a Guestbook object but got %T", obj)
	}
	guestbooklog.Info("Validation for Guestbook upon deletion", "name", guestbook.GetName())
	return admission.Warnings{"deleting " + guestbook.Name}, nil
}

func validateGuestbook(g *webappv1.Guestbook) error {
	if g.Spec.Replicas < 0 {
		return fmt.Errorf("spec.replicas must not be negative, got %d", g.Spec.Replicas)
	}
	return nil
}
