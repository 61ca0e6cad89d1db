package metricsauth

import (
	"context"
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
)

// Config sets the filter's caches and timeout; every field must be set
// (manager.MetricsAuthOptions after its defaults, converted). A TTL of
// zero or less caches nothing of its kind.
type Config struct {
	AuthenticatedTTL   time.Duration // reuse of a TokenReview that authenticated
	UnauthenticatedTTL time.Duration // reuse of a TokenReview that rejected
	AllowedTTL         time.Duration // reuse of a SubjectAccessReview that allowed
	DeniedTTL          time.Duration // reuse of a SubjectAccessReview that denied
	CacheSize          int           // entries of each of the four LRUs
	ReviewTimeout      time.Duration // bound of each review
}

// Filter authenticates and authorizes requests with the API server's
// reviews. Its caches are shared by every handler it wraps.
type Filter struct {
	cs      kubernetes.Interface
	timeout time.Duration
	authn   *reviewCache[authenticationv1.UserInfo]
	authz   *reviewCache[struct{}]
}

// New returns a filter that sends its reviews through cs.
func New(cs kubernetes.Interface, c Config) *Filter {
	return &Filter{
		cs:      cs,
		timeout: c.ReviewTimeout,
		authn:   newReviewCache[authenticationv1.UserInfo](c.CacheSize, c.AuthenticatedTTL, c.UnauthenticatedTTL),
		authz:   newReviewCache[struct{}](c.CacheSize, c.AllowedTTL, c.DeniedTTL),
	}
}

// Wrap returns next behind f: only a request whose bearer token is valid
// and whose user may perform its verb on its path reaches next, without
// its Authorization header. Denials are logged to log at V(4), failed
// reviews as errors.
func (f *Filter) Wrap(log logr.Logger, next http.Handler) http.Handler {
	return &authFilter{Filter: f, log: log, next: next}
}

// authFilter is the handler Wrap returns.
type authFilter struct {
	*Filter
	log  logr.Logger
	next http.Handler
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

// ServeHTTP answers 401, 403 or 500, or passes r to next without its
// Authorization header.
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
