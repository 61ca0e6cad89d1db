package admission

import (
	"context"
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
// decodes the review, calls its Handler and encodes the answer. It is
// controller-runtime's admission.Webhook (webhook.Admission), so
// server.Register("/validate-x", &webhook.Admission{Handler: h}) serves h.
// Only Handler is required.
type Webhook struct {
	// Handler answers the requests. A nil Handler answers every request
	// with a 500 error.
	Handler Handler
	// RecoverPanic says whether a panic in Handler is answered
	// allowed=false with code 500 (after it is logged and counted); nil
	// means true. False lets the panic through to the HTTP server (a
	// webhook.Server still logs, counts and answers it, with a plain 500).
	RecoverPanic *bool
	// WithContextFunc, when set, derives each request's context from the
	// HTTP request's (to carry headers or the peer's certificate to the
	// Handler); nil means the HTTP request's context.
	WithContextFunc func(ctx context.Context, r *http.Request) context.Context
	// LogConstructor makes each request's logger, put into the Handler's
	// context (logr.FromContextOrDiscard), from the server's logger and the
	// request; nil means DefaultLogConstructor.
	LogConstructor func(base logr.Logger, req *Request) logr.Logger
}

var (
	_ http.Handler = (*Webhook)(nil)
	_ Handler      = (*Webhook)(nil)
)

// WithRecoverPanic sets RecoverPanic and returns wh.
func (wh *Webhook) WithRecoverPanic(recoverPanic bool) *Webhook {
	wh.RecoverPanic = &recoverPanic
	return wh
}

// DefaultLogConstructor returns base with the request's uid, kind,
// namespace, name, operation and user; a nil req gives base.
func DefaultLogConstructor(base logr.Logger, req *Request) logr.Logger {
	if req == nil {
		return base
	}
	return base.WithValues("uid", req.UID, "kind", req.Kind.Kind, "namespace", req.Namespace,
		"name", req.Name, "operation", req.Operation, "user", req.UserInfo.Username)
}

// ServeHTTP answers one AdmissionReview. A request it cannot read (not a
// POST, not JSON, empty, larger than MaxRequestBytes, not an
// admission.k8s.io/v1 AdmissionReview with a request) gets the matching
// 4xx status and an AdmissionReview whose response carries the same code
// and says why. Everything else is answered with status 200 and Handle's
// answer.
func (wh *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if wh.WithContextFunc != nil {
		ctx = wh.WithContextFunc(ctx, r)
	}
	serving.Serve(ctx, w, r, &protocol, wh.answer)
}

// protocol is the admission.k8s.io/v1 AdmissionReview for serving.Serve,
// the path the conversion webhook shares.
var protocol = serving.Protocol[admissionv1.AdmissionReview]{
	Name:       "admission",
	APIVersion: admissionv1.SchemeGroupVersion.String(),
	Kind:       "AdmissionReview",
	MaxBytes:   MaxRequestBytes,
	Envelope: func(review *admissionv1.AdmissionReview) (metav1.TypeMeta, bool) {
		return review.TypeMeta, review.Request != nil
	},
	Failure: func(tm metav1.TypeMeta, status metav1.Status) admissionv1.AdmissionReview {
		return admissionv1.AdmissionReview{TypeMeta: tm, Response: &admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
	},
}

// answer handles the request of a review that serving.Serve checked.
func (wh *Webhook) answer(ctx context.Context, review *admissionv1.AdmissionReview) admissionv1.AdmissionReview {
	resp := wh.Handle(ctx, Request{AdmissionRequest: *review.Request})
	return admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: &resp.AdmissionResponse}
}

// Handle answers req as ServeHTTP does, without HTTP: it puts the
// request's logger (LogConstructor) and the request itself
// (RequestFromContext) into ctx, calls the Handler and completes the
// answer (Response.Complete: the request's UID, a status code, the
// patches encoded). A Handler that panics is answered allowed=false with
// code 500, logged and counted (as controller_runtime_webhook_panics_total
// when served by a webhook.Server), unless RecoverPanic is false.
func (wh *Webhook) Handle(ctx context.Context, req Request) (resp Response) {
	construct := wh.LogConstructor
	if construct == nil {
		construct = DefaultLogConstructor
	}
	log := construct(logr.FromContextOrDiscard(ctx), &req)
	ctx = NewContextWithRequest(logr.NewContext(ctx, log), req)
	defer func() {
		if err := resp.Complete(req); err != nil {
			resp = Errored(http.StatusInternalServerError, fmt.Errorf("admission: encode patch: %w", err))
			resp.UID = req.UID
		}
		log.V(1).Info("admission request answered", "allowed", resp.Allowed, "patches", len(resp.Patches))
	}()
	defer func() {
		if v := recover(); v != nil {
			serving.RecordPanic(ctx, v)
			if wh.RecoverPanic != nil && !*wh.RecoverPanic {
				panic(v)
			}
			log.Error(fmt.Errorf("panic: %v", v), "admission: handler panicked", "stack", string(debug.Stack()))
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

type requestKey struct{}

// NewContextWithRequest returns a context, derived from ctx, that carries
// req; Webhook.Handle gives its Handler one.
func NewContextWithRequest(ctx context.Context, req Request) context.Context {
	return context.WithValue(ctx, requestKey{}, req)
}

// RequestFromContext returns the request NewContextWithRequest put into
// ctx: a Defaulter or Validator finds there the request it is called for
// (its operation, user, dry-run flag). It fails when ctx carries none.
func RequestFromContext(ctx context.Context) (Request, error) {
	if req, ok := ctx.Value(requestKey{}).(Request); ok {
		return req, nil
	}
	return Request{}, errors.New("admission: no admission.Request in the context")
}
