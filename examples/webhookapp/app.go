// Package webhookapp is a small example of admission webhooks with
// kubeloop: an App kind whose replicas default to 1 and whose image is
// required, served by a webhook.Server that the API server calls.
//
// Setup registers both webhooks next to the kind, on anything that has a
// scheme and a webhook server (the manager, or the manager-free
// webhookapp command in cmd/webhookapp).
package webhookapp

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeloop/kubeloop/webhook"
	"github.com/kubeloop/kubeloop/webhook/admission"
)

// GroupVersion is the API group and version of App.
var GroupVersion = schema.GroupVersion{Group: "webhookapp.kubeloop.dev", Version: "v1"}

// MaxReplicas is the most replicas an App may ask for.
const MaxReplicas = 10

// App runs Spec.Replicas copies of Spec.Image.
type App struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              AppSpec `json:"spec,omitempty"`
}

// AppSpec is what the user asks for.
type AppSpec struct {
	// Image is required.
	Image string `json:"image,omitempty"`
	// Replicas defaults to 1 and is at most MaxReplicas.
	Replicas int32 `json:"replicas,omitempty"`
}

// AppList is a list of Apps.
type AppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []App `json:"items"`
}

// DeepCopyObject copies a.
func (a *App) DeepCopyObject() runtime.Object {
	out := *a
	a.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// DeepCopyObject copies l.
func (l *AppList) DeepCopyObject() runtime.Object {
	out := *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]App, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*App)
	}
	return &out
}

// AddToScheme registers App and AppList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &App{}, &AppList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Defaulter sets Spec.Replicas to 1 when it is unset.
type Defaulter struct{}

// Default sets the defaults of app.
func (Defaulter) Default(_ context.Context, app *App) error {
	if app.Spec.Replicas == 0 {
		app.Spec.Replicas = 1
	}
	return nil
}

// Validator requires an image and at most MaxReplicas replicas.
type Validator struct{}

// ValidateCreate checks a new App.
func (Validator) ValidateCreate(_ context.Context, app *App) (admission.Warnings, error) {
	return validate(app)
}

// ValidateUpdate checks a changed App.
func (Validator) ValidateUpdate(_ context.Context, _, app *App) (admission.Warnings, error) {
	return validate(app)
}

// ValidateDelete allows every deletion.
func (Validator) ValidateDelete(context.Context, *App) (admission.Warnings, error) {
	return nil, nil
}

// validate returns an Invalid status error listing every problem, which
// kubectl prints field by field.
func validate(app *App) (admission.Warnings, error) {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if app.Spec.Image == "" {
		errs = append(errs, field.Required(spec.Child("image"), "an App needs an image"))
	}
	if app.Spec.Replicas > MaxReplicas {
		errs = append(errs, field.Invalid(spec.Child("replicas"), app.Spec.Replicas, fmt.Sprintf("must be at most %d", MaxReplicas)))
	}
	var warnings admission.Warnings
	if app.Spec.Replicas == 1 {
		warnings = append(warnings, "a single replica is not highly available")
	}
	if len(errs) > 0 {
		return warnings, apierrors.NewInvalid(GroupVersion.WithKind("App").GroupKind(), app.Name, errs)
	}
	return warnings, nil
}

// Setup registers App's defaulting and validating webhooks on mgr's
// server, at webhook.MutatePath and webhook.ValidatePath of App.
func Setup(mgr webhook.Manager) error {
	if mgr == nil {
		return errors.New("webhookapp: no manager")
	}
	return webhook.ManagedBy(mgr, &App{}).WithDefaulter(Defaulter{}).WithValidator(Validator{}).Complete()
}
