package webhook

import "github.com/kubeloop/kubeloop/webhook/admission"

// The names below are controller-runtime's shorthands in its webhook
// package for the admission package's, kept so that ported code compiles
// by its import path alone.

// Admission is an admission webhook, registered with Server.Register:
// srv.Register("/validate-x", &webhook.Admission{Handler: h}).
type Admission = admission.Webhook

// AdmissionRequest is the input of an admission handler.
type AdmissionRequest = admission.Request

// AdmissionResponse is the answer of an admission handler.
type AdmissionResponse = admission.Response

// AdmissionHandler answers admission requests.
type AdmissionHandler = admission.Handler

// AdmissionDecoder decodes the objects of admission requests.
type AdmissionDecoder = admission.Decoder

// JSONPatchOp is one JSON patch operation (controller-runtime's is
// gomodules' jsonpatch.Operation, whose Operation field is Op here).
type JSONPatchOp = admission.PatchOperation

// Allowed admits the request, as admission.Allowed.
func Allowed(message string) admission.Response { return admission.Allowed(message) }

// Denied rejects the request, as admission.Denied.
func Denied(message string) admission.Response { return admission.Denied(message) }

// Patched admits the request and patches the object, as admission.Patched.
func Patched(message string, patches ...admission.PatchOperation) admission.Response {
	return admission.Patched(message, patches...)
}

// Errored rejects a request that could not be handled, as
// admission.Errored.
func Errored(code int32, err error) admission.Response { return admission.Errored(code, err) }

// CustomDefaulter is admission.CustomDefaulter, controller-runtime's
// webhook.CustomDefaulter.
type CustomDefaulter = admission.CustomDefaulter

// CustomValidator is admission.CustomValidator, controller-runtime's
// webhook.CustomValidator.
type CustomValidator = admission.CustomValidator
