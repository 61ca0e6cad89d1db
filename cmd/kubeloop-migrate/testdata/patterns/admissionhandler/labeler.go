// Package admissionhandler is a raw admission webhook for a core type, in
// the shape the kubebuilder book shows for "admission webhooks for core
// types": a handler with an admission.Decoder, served as a
// webhook.Admission.
package admissionhandler

import (
	"context"
	"encoding/json"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Path is where the labeler is served.
const Path = "/mutate-v1-configmap"

// +kubebuilder:webhook:path=/mutate-v1-configmap,mutating=true,failurePolicy=fail,groups="",resources=configmaps,verbs=create;update,versions=v1,name=mconfigmap.kb.io,sideEffects=None,admissionReviewVersions=v1

// ConfigMapLabeler labels every ConfigMap it admits and denies those with a
// "forbidden" key.
type ConfigMapLabeler struct {
	Decoder admission.Decoder
}

// Handle labels the ConfigMap.
func (h *ConfigMapLabeler) Handle(ctx context.Context, req admission.Request) admission.Response {
	cm := &corev1.ConfigMap{}
	if err := h.Decoder.Decode(req, cm); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if len(req.OldObject.Raw) > 0 {
		old := &corev1.ConfigMap{}
		if err := h.Decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		if old.Labels["locked"] == "true" {
			return admission.Denied("the ConfigMap is locked")
		}
	}
	if _, ok := cm.Data["forbidden"]; ok {
		return admission.Denied("key \"forbidden\" is not allowed")
	}
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["labeled-by"] = "configmap-labeler"

	marshaled, err := json.Marshal(cm)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, marshaled)
}

// NewWebhook is the labeler as an http.Handler.
func NewWebhook(scheme *runtime.Scheme) *webhook.Admission {
	return &webhook.Admission{Handler: &ConfigMapLabeler{Decoder: admission.NewDecoder(scheme)}}
}

// SetupWithManager registers the labeler on the manager's webhook server.
func SetupWithManager(mgr ctrl.Manager) {
	mgr.GetWebhookServer().Register(Path, NewWebhook(mgr.GetScheme()))
}
