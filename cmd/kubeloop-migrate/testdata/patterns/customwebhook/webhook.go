// Package customwebhook keeps the pre-v0.23 CustomDefaulter and
// CustomValidator (runtime.Object methods), registered with
// WithCustomDefaulter and WithCustomValidator, as a project upgraded from
// controller-runtime v0.22 has them.
package customwebhook

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

var podlog = logf.Log.WithName("pod-resource")

// SetupPodWebhookWithManager registers the webhooks for Pod in the manager.
func SetupPodWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &corev1.Pod{}).
		WithCustomDefaulter(&PodCustomDefaulter{Team: "platform"}).
		WithCustomValidator(&PodCustomValidator{}).
		Complete()
}

// PodCustomDefaulter labels pods with the team.
type PodCustomDefaulter struct {
	Team string
}

var _ webhook.CustomDefaulter = &PodCustomDefaulter{}

// Default implements webhook.CustomDefaulter.
func (d *PodCustomDefaulter) Default(_ context.Context, obj runtime.Object) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("expected a Pod object but got %T", obj)
	}
	podlog.Info("Defaulting for Pod", "name", pod.GetName())
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	if pod.Labels["team"] == "" {
		pod.Labels["team"] = d.Team
	}
	return nil
}

// PodCustomValidator requires a team label.
type PodCustomValidator struct{}

var _ webhook.CustomValidator = &PodCustomValidator{}

// ValidateCreate implements webhook.CustomValidator.
func (v *PodCustomValidator) ValidateCreate(_ context.Context, obj runtime.Object) (admission.Warnings, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("expected a Pod object but got %T", obj)
	}
	return validate(pod)
}

// ValidateUpdate implements webhook.CustomValidator.
func (v *PodCustomValidator) ValidateUpdate(_ context.Context, oldObj, newObj runtime.Object) (admission.Warnings, error) {
	pod, ok := newObj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("expected a Pod object for the newObj but got %T", newObj)
	}
	return validate(pod)
}

// ValidateDelete implements webhook.CustomValidator.
func (v *PodCustomValidator) ValidateDelete(_ context.Context, obj runtime.Object) (admission.Warnings, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("expected a Pod object but got %T", obj)
	}
	return admission.Warnings{"deleting pod " + pod.Name}, nil
}

func validate(pod *corev1.Pod) (admission.Warnings, error) {
	if pod.Labels["team"] == "" {
		return nil, fmt.Errorf("pod %s has no team label", pod.Name)
	}
	return nil, nil
}
