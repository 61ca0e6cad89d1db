package manager

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/manager/internal/metricsauth"
)

// MetricsFilter wraps the metrics server's handler, for example to
// require authentication; an error fails Start.
type MetricsFilter func(log logr.Logger, handler http.Handler) (http.Handler, error)

// MetricsFilterProvider builds a MetricsFilter from the manager's
// rest.Config and HTTP client.
type MetricsFilterProvider func(cfg *rest.Config, httpClient *http.Client) (MetricsFilter, error)

// MetricsAuthOptions configures the caches and timeout of the filter that
// MetricsAuth builds. Its zero value gives controller-runtime's
// filters.WithAuthenticationAndAuthorization timings. For every TTL, zero
// means the default and a negative value caches nothing of that kind.
//
// The TTLs are revocation delays: a deleted service account or an expired
// or revoked token keeps scraping for up to AuthenticatedTTL after its last
// successful review, and a removed ClusterRoleBinding keeps granting
// access for up to AllowedTTL.
type MetricsAuthOptions struct {
	// AuthenticatedTTL is how long a TokenReview that authenticated a
	// token is reused for that token. Zero: 1 minute.
	AuthenticatedTTL time.Duration
	// UnauthenticatedTTL is how long a TokenReview that rejected a token
	// is reused for that token. Zero: 10 seconds.
	UnauthenticatedTTL time.Duration
	// AllowedTTL is how long a SubjectAccessReview that allowed a user a
	// verb on a path is reused for that user, verb and path. Zero: 5
	// minutes.
	AllowedTTL time.Duration
	// DeniedTTL is how long a SubjectAccessReview that denied is reused.
	// Zero: 30 seconds.
	DeniedTTL time.Duration
	// CacheSize bounds each of the four caches (authenticated,
	// unauthenticated, allowed, denied) to that many entries, the least
	// recently used going first, so that requests with ever new garbage
	// tokens cost a TokenReview each but no memory beyond the bound. Zero:
	// 1024. Negative is an error.
	CacheSize int
	// ReviewTimeout bounds each TokenReview and SubjectAccessReview. Zero:
	// 10 seconds. Negative is an error.
	ReviewTimeout time.Duration
}

// Defaults of MetricsAuthOptions.
const (
	defaultAuthenticatedTTL   = time.Minute
	defaultUnauthenticatedTTL = 10 * time.Second
	defaultAllowedTTL         = 5 * time.Minute
	defaultDeniedTTL          = 30 * time.Second
	defaultAuthCacheSize      = 1024
	defaultReviewTimeout      = 10 * time.Second
)

// withDefaults fills the zero fields of o.
func (o MetricsAuthOptions) withDefaults() MetricsAuthOptions {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.AuthenticatedTTL, defaultAuthenticatedTTL)
	def(&o.UnauthenticatedTTL, defaultUnauthenticatedTTL)
	def(&o.AllowedTTL, defaultAllowedTTL)
	def(&o.DeniedTTL, defaultDeniedTTL)
	def(&o.ReviewTimeout, defaultReviewTimeout)
	if o.CacheSize == 0 {
		o.CacheSize = defaultAuthCacheSize
	}
	return o
}

// validate returns every problem of o joined.
func (o MetricsAuthOptions) validate() error {
	var errs []error
	if o.CacheSize < 0 {
		errs = append(errs, fmt.Errorf("manager: MetricsAuthOptions.CacheSize %d is negative", o.CacheSize))
	}
	if o.ReviewTimeout < 0 {
		errs = append(errs, fmt.Errorf("manager: MetricsAuthOptions.ReviewTimeout %s is negative", o.ReviewTimeout))
	}
	return errors.Join(errs...)
}

// WithAuthenticationAndAuthorization is a MetricsFilterProvider that lets
// a request through only when its bearer token is valid (a TokenReview)
// and its user may perform the request's verb on the request's path as a
// non-resource URL (a SubjectAccessReview), for example through a
// ClusterRole with nonResourceURLs ["/metrics"] and verbs ["get"]. It is
// MetricsAuth with the zero MetricsAuthOptions: answers are cached, so a
// revoked token keeps scraping for up to 1 minute and a revoked
// permission for up to 5 minutes (see MetricsAuthOptions).
//
// The Authorization header's scheme is matched in any case ("Bearer",
// "bearer"), as the API server does. Without a token it answers 401, with
// an invalid one 401, without the permission 403; when a review cannot be
// made it answers 500, never letting the request through. The user's
// groups gain system:authenticated, as on the API server. A request let
// through reaches the handler without its Authorization header. Serve it
// over TLS (MetricsOptions.SecureServing) or on loopback: a bearer token
// sent in the clear can be replayed. This is the kubebuilder scaffold's
// filters.WithAuthenticationAndAuthorization; the manager's identity needs
// create on tokenreviews.authentication.k8s.io and
// subjectaccessreviews.authorization.k8s.io (the scaffold's
// metrics_auth_role).
func WithAuthenticationAndAuthorization(cfg *rest.Config, httpClient *http.Client) (MetricsFilter, error) {
	return MetricsAuth(MetricsAuthOptions{})(cfg, httpClient)
}

// MetricsAuth returns a MetricsFilterProvider like
// WithAuthenticationAndAuthorization whose caches and timeout opts sets.
// Each review's answer is cached under a sha256 digest: of the token for a
// TokenReview, of the user (name, UID, groups, extra), verb and path for a
// SubjectAccessReview. Requests that miss on one key at the same time
// share one review. A review that fails (the API server is unreachable,
// or refuses the manager) is not cached: the next request tries again.
// The caches are shared by every handler the filter wraps. Invalid opts
// fail the provider, and so manager.New.
func MetricsAuth(opts MetricsAuthOptions) MetricsFilterProvider {
	return func(cfg *rest.Config, httpClient *http.Client) (MetricsFilter, error) {
		if err := opts.validate(); err != nil {
			return nil, err
		}
		cs, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
		if err != nil {
			return nil, fmt.Errorf("manager: metrics authentication client: %w", err)
		}
		f := metricsauth.New(cs, metricsauth.Config(opts.withDefaults()))
		return func(log logr.Logger, next http.Handler) (http.Handler, error) {
			return f.Wrap(log.WithName("metrics-auth"), next), nil
		}, nil
	}
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
