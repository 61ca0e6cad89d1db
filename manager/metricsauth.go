package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// MetricsFilter wraps the metrics server's handler, for example to
// require authentication; an error fails Start.
type MetricsFilter func(log logr.Logger, handler http.Handler) (http.Handler, error)

// MetricsFilterProvider builds a MetricsFilter from the manager's
// rest.Config and HTTP client.
type MetricsFilterProvider func(cfg *rest.Config, httpClient *http.Client) (MetricsFilter, error)

// metricsReviewTimeout bounds each TokenReview and SubjectAccessReview.
const metricsReviewTimeout = 10 * time.Second

// WithAuthenticationAndAuthorization is a MetricsFilterProvider that lets
// a request through only when its bearer token is valid (a TokenReview)
// and its user may perform the request's verb on the request's path as a
// non-resource URL (a SubjectAccessReview), for example through a
// ClusterRole with nonResourceURLs ["/metrics"] and verbs ["get"].
// Without a token it answers 401, with an invalid one 401, without the
// permission 403; when a review cannot be made it answers 500, never
// letting the request through. Serve it over TLS (MetricsOptions.
// SecureServing) or on loopback: a bearer token sent in the clear can be
// replayed. This is the kubebuilder scaffold's
// filters.WithAuthenticationAndAuthorization; the manager's identity needs
// create on tokenreviews.authentication.k8s.io and
// subjectaccessreviews.authorization.k8s.io (the scaffold's
// metrics_auth_role).
func WithAuthenticationAndAuthorization(cfg *rest.Config, httpClient *http.Client) (MetricsFilter, error) {
	cs, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("manager: metrics authentication client: %w", err)
	}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		a := &metricsAuth{cs: cs, log: log.WithName("metrics-auth"), next: next}
		return a, nil
	}, nil
}

type metricsAuth struct {
	cs   kubernetes.Interface
	log  logr.Logger
	next http.Handler
}

func (a *metricsAuth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(token) == "" {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), metricsReviewTimeout)
	defer cancel()
	tr, err := a.cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: strings.TrimSpace(token)},
	}, metav1.CreateOptions{})
	if err != nil {
		a.fail(w, fmt.Errorf("token review: %w", err))
		return
	}
	if !tr.Status.Authenticated {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	u := tr.Status.User
	extra := make(map[string]authorizationv1.ExtraValue, len(u.Extra))
	for k, v := range u.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := a.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
			NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: r.URL.Path, Verb: strings.ToLower(r.Method)},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		a.fail(w, fmt.Errorf("subject access review of %q: %w", u.Username, err))
		return
	}
	if !sar.Status.Allowed {
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	a.next.ServeHTTP(w, r)
}

// fail answers 500: a review that could not be made denies the request.
func (a *metricsAuth) fail(w http.ResponseWriter, err error) {
	a.log.Error(err, "cannot authorize a metrics request; denying it")
	http.Error(w, "Internal Server Error", http.StatusInternalServerError)
}

// filteredMetricsHandler applies the configured filter, if any.
func (m *Manager) filteredMetricsHandler() (http.Handler, error) {
	h := m.metricsHandler()
	if m.metricsFilter == nil {
		return h, nil
	}
	fh, err := m.metricsFilter(m.logger, h)
	if err != nil {
		return nil, fmt.Errorf("manager: metrics filter: %w", err)
	}
	if fh == nil {
		return nil, errors.New("manager: metrics filter returned a nil handler")
	}
	return fh, nil
}
