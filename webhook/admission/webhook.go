package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/webhook/internal/serving"
)

// MaxRequestBytes is the largest AdmissionReview a Webhook reads: 7 MiB.
// The API server accepts request bodies of at most 3 MiB, and the review
// of an update carries the old and the new object besides its envelope.
// A server with a lower limit (webhook.Options.MaxRequestBytes) wins.
const MaxRequestBytes = 7 << 20

// Webhook serves admission.k8s.io/v1 AdmissionReviews over HTTP: it
// decodes the review, calls its Handler and encodes the answer.
type Webhook struct {
	// Handler answers the requests. A nil Handler answers every request
	// with a 500 error.
	Handler Handler
}

var _ http.Handler = (*Webhook)(nil)

// ServeHTTP answers one AdmissionReview. A request it cannot read (not a
// POST, not JSON, empty, larger than MaxRequestBytes, not an
// admission.k8s.io/v1 AdmissionReview with a request) gets the matching
// 4xx status and an AdmissionReview whose response carries the same code
// and says why. Everything else is answered with status 200, the Handler's
// verdict, and the request's UID. A Handler that panics is answered
// allowed=false with code 500, logged and counted (as
// controller_runtime_webhook_panics_total when served by a webhook.Server).
func (wh *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	log := logr.FromContextOrDiscard(ctx)
	body, err := serving.ReadBody(w, r, MaxRequestBytes)
	if err != nil {
		status := http.StatusBadRequest
		if be := (*serving.BodyError)(nil); errors.As(err, &be) {
			status = be.Status
		}
		wh.writeError(ctx, w, status, fmt.Errorf("admission: %w", err))
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		wh.writeError(ctx, w, http.StatusBadRequest, fmt.Errorf("admission: decode AdmissionReview: %w", err))
		return
	}
	if gvk := review.GroupVersionKind(); gvk != admissionv1.SchemeGroupVersion.WithKind("AdmissionReview") {
		wh.writeError(ctx, w, http.StatusBadRequest, fmt.Errorf("admission: want an admission.k8s.io/v1 AdmissionReview, got apiVersion %q kind %q", review.APIVersion, review.Kind))
		return
	}
	if review.Request == nil {
		wh.writeError(ctx, w, http.StatusBadRequest, errors.New("admission: AdmissionReview has no request"))
		return
	}
	req := Request{AdmissionRequest: *review.Request}
	log = log.WithValues("uid", req.UID, "kind", req.Kind.Kind, "namespace", req.Namespace, "name", req.Name, "operation", req.Operation)
	ctx = logr.NewContext(ctx, log)

	resp := wh.handle(ctx, req)
	resp.UID = req.UID
	if len(resp.Patches) > 0 {
		patch, err := json.Marshal(resp.Patches)
		if err != nil {
			resp = Errored(http.StatusInternalServerError, fmt.Errorf("admission: encode patch: %w", err))
			resp.UID = req.UID
		} else {
			pt := admissionv1.PatchTypeJSONPatch
			resp.Patch, resp.PatchType = patch, &pt
		}
	}
	log.V(1).Info("admission request answered", "allowed", resp.Allowed, "patches", len(resp.Patches))
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: &resp.AdmissionResponse}
	if err := serving.WriteJSON(w, http.StatusOK, out); err != nil {
		log.Error(err, "admission: answer not sent")
	}
}

// handle calls the Handler and turns a panic into a 500 answer.
func (wh *Webhook) handle(ctx context.Context, req Request) (resp Response) {
	defer func() {
		if v := recover(); v != nil {
			logr.FromContextOrDiscard(ctx).Error(fmt.Errorf("panic: %v", v), "admission: handler panicked", "stack", string(debug.Stack()))
			serving.RecordPanic(ctx, v)
			// The panic value stays in the log: it may hold internals the
			// client should not see.
			resp = Errored(http.StatusInternalServerError, errors.New("admission: internal error: the webhook handler panicked"))
		}
	}()
	if wh.Handler == nil {
		return Errored(http.StatusInternalServerError, errors.New("admission: webhook has no handler"))
	}
	return wh.Handler.Handle(ctx, req)
}

func (wh *Webhook) writeError(ctx context.Context, w http.ResponseWriter, status int, err error) {
	log := logr.FromContextOrDiscard(ctx)
	log.V(1).Info("bad admission request", "status", status, "error", err.Error())
	out := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Response: &admissionv1.AdmissionResponse{
			Allowed: false,
			Result:  &metav1.Status{Status: metav1.StatusFailure, Code: int32(status), Message: err.Error()},
		},
	}
	if err := serving.WriteJSON(w, status, out); err != nil {
		log.Error(err, "admission: answer not sent")
	}
}
