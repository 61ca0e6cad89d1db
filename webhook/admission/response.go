package admission

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Request is one admission request from the API server.
type Request struct {
	admissionv1.AdmissionRequest
}

// Response is the answer to a Request. Patches, when set, are sent as an
// RFC 6902 JSON patch; the UID is filled in by the Webhook.
type Response struct {
	admissionv1.AdmissionResponse
	// Patches change the object of a mutating request.
	Patches []PatchOperation
}

// Warnings are messages the API server returns to the client (kubectl
// prints them) without rejecting the request.
type Warnings []string

// Handler answers admission requests.
type Handler interface {
	// Handle answers req. It must not keep ctx.
	Handle(ctx context.Context, req Request) Response
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(ctx context.Context, req Request) Response

var _ Handler = HandlerFunc(nil)

// Handle calls f(ctx, req).
func (f HandlerFunc) Handle(ctx context.Context, req Request) Response { return f(ctx, req) }

// Allowed admits the request, with an optional message.
func Allowed(message string) Response { return ValidationResponse(true, message) }

// Denied rejects the request with message (code 403, reason Forbidden);
// the API server shows it to the client.
func Denied(message string) Response { return ValidationResponse(false, message) }

// ValidationResponse admits or rejects the request with message.
func ValidationResponse(allowed bool, message string) Response {
	code, reason := int32(http.StatusOK), metav1.StatusReason("")
	if !allowed {
		code, reason = http.StatusForbidden, metav1.StatusReasonForbidden
	}
	return Response{AdmissionResponse: admissionv1.AdmissionResponse{
		Allowed: allowed,
		Result:  &metav1.Status{Code: code, Reason: reason, Message: message},
	}}
}

// Patched admits the request and changes the object with patches.
func Patched(message string, patches ...PatchOperation) Response {
	r := Allowed(message)
	r.Patches = patches
	return r
}

// Errored rejects the request because it could not be handled: code is an
// HTTP status (400 for a bad request, 500 for a failure of the webhook).
// An err that is a Kubernetes API status error keeps its status.
func Errored(code int32, err error) Response {
	st := &metav1.Status{Status: metav1.StatusFailure, Code: code, Message: err.Error()}
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) {
		s := apiStatus.Status()
		st = &s
	}
	return Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: st}}
}

// PatchResponseFromRaw admits the request and patches the object from
// original to current, both JSON documents.
func PatchResponseFromRaw(original, current []byte) Response {
	patches, err := CreatePatch(original, current)
	if err != nil {
		return Errored(http.StatusInternalServerError, err)
	}
	return Patched("", patches...)
}

// Complete fills in what the answer to req still lacks: the request's
// UID, a Result with code 200 when there is none or its code is 0, and,
// when Patches are set, Patch (their JSON, replacing any Patch set by
// hand) and PatchType JSONPatch. Webhook.Handle calls it; it fails only
// when a patch value cannot be encoded as JSON.
func (r *Response) Complete(req Request) error {
	r.UID = req.UID
	if r.Result == nil {
		r.Result = &metav1.Status{}
	}
	if r.Result.Code == 0 {
		r.Result.Code = http.StatusOK
	}
	if len(r.Patches) == 0 {
		return nil
	}
	patch, err := json.Marshal(r.Patches)
	if err != nil {
		return err
	}
	pt := admissionv1.PatchTypeJSONPatch
	r.Patch, r.PatchType = patch, &pt
	return nil
}

// WithWarnings returns r with warnings appended.
func (r Response) WithWarnings(warnings ...string) Response {
	r.Warnings = append(r.Warnings, warnings...)
	return r
}

// deniedFromError turns a validation error into a denial: an API status
// error keeps its code and reason, any other error is a 403 with its text.
func deniedFromError(err error) Response {
	var apiStatus apierrors.APIStatus
	if errors.As(err, &apiStatus) {
		s := apiStatus.Status()
		return Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &s}}
	}
	return Denied(err.Error())
}
