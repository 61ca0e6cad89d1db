package manager

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
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
		o := opts.withDefaults()
		cs, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
		if err != nil {
			return nil, fmt.Errorf("manager: metrics authentication client: %w", err)
		}
		authn := newReviewCache[authenticationv1.UserInfo](o.CacheSize, o.AuthenticatedTTL, o.UnauthenticatedTTL)
		authz := newReviewCache[struct{}](o.CacheSize, o.AllowedTTL, o.DeniedTTL)
		return func(log logr.Logger, next http.Handler) (http.Handler, error) {
			return &authFilter{cs: cs, log: log.WithName("metrics-auth"), next: next,
				timeout: o.ReviewTimeout, authn: authn, authz: authz}, nil
		}, nil
	}
}

// authFilter is the handler MetricsAuth's filter wraps a handler in.
type authFilter struct {
	cs      kubernetes.Interface
	log     logr.Logger
	next    http.Handler
	timeout time.Duration
	authn   *reviewCache[authenticationv1.UserInfo]
	authz   *reviewCache[struct{}]
}

var _ http.Handler = (*authFilter)(nil)

// bearerToken returns the request's bearer token, parsed as the API
// server's bearer token authenticator does: the header trimmed, split on
// single spaces, the scheme matched in any case, the token the second
// field ("Bearer  x", with two spaces, has none).
func bearerToken(r *http.Request) (string, bool) {
	parts := strings.SplitN(strings.TrimSpace(r.Header.Get("Authorization")), " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

func (a *authFilter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, ok := bearerToken(r)
	if !ok {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	u, ok, err := a.authenticate(r.Context(), token)
	if err != nil {
		a.fail(w, err)
		return
	}
	if !ok {
		a.log.V(4).Info("metrics request with an invalid token")
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	verb := strings.ToLower(r.Method)
	_, ok, err = a.authorize(r.Context(), u, verb, r.URL.Path)
	if err != nil {
		a.fail(w, err)
		return
	}
	if !ok {
		msg := "Authorization denied for user " + u.Username
		a.log.V(4).Info(msg, "verb", verb, "path", r.URL.Path)
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	r.Header.Del("Authorization")
	a.next.ServeHTTP(w, r)
}

// reviewContext detaches a review from the request that started it, which
// other requests may be waiting on, and bounds it in time.
func (a *authFilter) reviewContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), a.timeout)
}

// authenticate returns the user of token, from the cache or a TokenReview.
func (a *authFilter) authenticate(ctx context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	key := newKeyWriter().string(token).sum()
	return a.authn.do(ctx, key, func() (authenticationv1.UserInfo, bool, error) {
		ctx, cancel := a.reviewContext(ctx)
		defer cancel()
		tr, err := a.cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
			Spec: authenticationv1.TokenReviewSpec{Token: token},
		}, metav1.CreateOptions{})
		if err != nil {
			return authenticationv1.UserInfo{}, false, fmt.Errorf("token review: %w", err)
		}
		return withAuthenticatedGroup(tr.Status.User), tr.Status.Authenticated, nil
	})
}

// withAuthenticatedGroup adds system:authenticated to u's groups unless u
// is anonymous or already in system:authenticated or
// system:unauthenticated, as the API server's delegating authenticator
// does, so that a permission bound to that group counts.
func withAuthenticatedGroup(u authenticationv1.UserInfo) authenticationv1.UserInfo {
	if u.Username == "system:anonymous" || slices.Contains(u.Groups, "system:authenticated") || slices.Contains(u.Groups, "system:unauthenticated") {
		return u
	}
	u.Groups = append(slices.Clip(u.Groups), "system:authenticated")
	return u
}

// authorize tells whether u may perform verb on the non-resource path,
// from the cache or a SubjectAccessReview.
func (a *authFilter) authorize(ctx context.Context, u authenticationv1.UserInfo, verb, path string) (struct{}, bool, error) {
	kw := newKeyWriter().string(u.Username).string(u.UID).int(len(u.Groups))
	for _, g := range u.Groups {
		kw.string(g)
	}
	kw.int(len(u.Extra))
	for _, k := range slices.Sorted(maps.Keys(u.Extra)) {
		kw.string(k).int(len(u.Extra[k]))
		for _, v := range u.Extra[k] {
			kw.string(v)
		}
	}
	key := kw.string(verb).string(path).sum()
	return a.authz.do(ctx, key, func() (struct{}, bool, error) {
		ctx, cancel := a.reviewContext(ctx)
		defer cancel()
		extra := make(map[string]authorizationv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			extra[k] = authorizationv1.ExtraValue(v)
		}
		sar, err := a.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
				NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			return struct{}{}, false, fmt.Errorf("subject access review of %q: %w", u.Username, err)
		}
		return struct{}{}, sar.Status.Allowed, nil
	})
}

// fail answers 500: a review that could not be made denies the request.
func (a *authFilter) fail(w http.ResponseWriter, err error) {
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
