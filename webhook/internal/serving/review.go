package serving

import (
	"context"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Protocol describes one kind of review, R, for Serve: what its envelope
// must say, how large it may be, and how to answer one that cannot be
// served. The admission webhook's is an admission.k8s.io/v1
// AdmissionReview, the conversion webhook's an apiextensions.k8s.io/v1
// ConversionReview.
type Protocol[R any] struct {
	// Name prefixes errors and names the requests in logs: "admission",
	// "conversion".
	Name string
	// APIVersion and Kind are the envelope every review must carry.
	APIVersion, Kind string
	// MaxBytes bounds the request body.
	MaxBytes int64
	// Envelope returns a decoded review's TypeMeta and whether it carries
	// a request.
	Envelope func(review *R) (tm metav1.TypeMeta, hasRequest bool)
	// Failure returns the review that answers a request Serve refuses:
	// tm is the protocol's envelope and status says why (Status Failure,
	// the HTTP code, the message).
	Failure func(tm metav1.TypeMeta, status metav1.Status) R
}

// Serve answers one review request: it reads and decodes the body into an
// R (ReadBody's checks, at most p.MaxBytes), checks its apiVersion, kind
// and request, calls answer with it and writes answer's review with
// status 200. A request that fails a check is answered with its 4xx
// status and p.Failure's review; answer is not called. Logs go to ctx's
// logger.
func Serve[R any](ctx context.Context, w http.ResponseWriter, r *http.Request, p *Protocol[R], answer func(ctx context.Context, review *R) R) {
	review, status, err := p.read(w, r)
	if err != nil {
		p.refuse(ctx, w, status, err)
		return
	}
	p.write(ctx, w, http.StatusOK, answer(ctx, review))
}

// read decodes and checks the review of r; on error it returns the HTTP
// status to answer with.
func (p *Protocol[R]) read(w http.ResponseWriter, r *http.Request) (*R, int, error) {
	review := new(R)
	if err := Decode(w, r, p.MaxBytes, p.Kind, review); err != nil {
		return nil, Status(err), fmt.Errorf("%s: %w", p.Name, err)
	}
	tm, hasRequest := p.Envelope(review)
	if tm.APIVersion != p.APIVersion || tm.Kind != p.Kind {
		return nil, http.StatusBadRequest, fmt.Errorf("%s: want an %s %s, got apiVersion %q kind %q", p.Name, p.APIVersion, p.Kind, tm.APIVersion, tm.Kind)
	}
	if !hasRequest {
		return nil, http.StatusBadRequest, fmt.Errorf("%s: %s has no request", p.Name, p.Kind)
	}
	return review, 0, nil
}

// refuse answers a request that failed a check with status and a review
// saying why.
func (p *Protocol[R]) refuse(ctx context.Context, w http.ResponseWriter, status int, err error) {
	logr.FromContextOrDiscard(ctx).V(1).Info("bad "+p.Name+" request", "status", status, "error", err.Error())
	tm := metav1.TypeMeta{APIVersion: p.APIVersion, Kind: p.Kind}
	p.write(ctx, w, status, p.Failure(tm, metav1.Status{Status: metav1.StatusFailure, Code: int32(status), Message: err.Error()}))
}

// write sends review with status, logging a failure.
func (p *Protocol[R]) write(ctx context.Context, w http.ResponseWriter, status int, review R) {
	if err := WriteJSON(w, status, review); err != nil {
		logr.FromContextOrDiscard(ctx).Error(err, p.Name+": answer not sent")
	}
}
