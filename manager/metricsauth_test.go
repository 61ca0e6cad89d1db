package manager_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/manager"
)

// saToken creates a service account in default and returns a token of it.
func saToken(t *testing.T, cs kubernetes.Interface, name string) string {
	t.Helper()
	ctx := context.Background()
	_, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	require.NoError(t, err)
	return tr.Status.Token
}

// metricsRBAC creates two service accounts, reader with get on /metrics
// and other without, and returns reader's name and both tokens.
func metricsRBAC(t *testing.T, cs kubernetes.Interface) (reader, readerToken, otherToken string) {
	t.Helper()
	ctx := context.Background()
	reader, other := unique("metrics-reader"), unique("metrics-other")
	readerToken, otherToken = saToken(t, cs, reader), saToken(t, cs, other)
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: reader},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: reader},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: reader},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: reader, Namespace: "default"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	return reader, readerToken, otherToken
}

// reviewCounter counts the TokenReviews and SubjectAccessReviews a
// metrics filter sends to the API server.
type reviewCounter struct{ tokenReviews, accessReviews atomic.Int64 }

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// provider is manager.MetricsAuth(opts) sending through a counting transport.
func (c *reviewCounter) provider(opts manager.MetricsAuthOptions) manager.MetricsFilterProvider {
	return func(cfg *rest.Config, hc *http.Client) (manager.MetricsFilter, error) {
		counting := *hc
		base := hc.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		counting.Transport = roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			switch {
			case strings.HasSuffix(r.URL.Path, "/tokenreviews"):
				c.tokenReviews.Add(1)
			case strings.HasSuffix(r.URL.Path, "/subjectaccessreviews"):
				c.accessReviews.Add(1)
			}
			return base.RoundTrip(r)
		})
		return manager.MetricsAuth(opts)(cfg, &counting)
	}
}

// counts returns the reviews sent so far.
func (c *reviewCounter) counts() [2]int64 {
	return [2]int64{c.tokenReviews.Load(), c.accessReviews.Load()}
}

// startMetrics starts mgr and returns its /metrics URL.
func startMetrics(t *testing.T, mgr *manager.Manager) string {
	t.Helper()
	r := start(mgr)
	t.Cleanup(func() { assert.NoError(t, r.stop(t)) })
	require.Eventually(t, func() bool { return mgr.MetricsAddr() != nil }, 30e9, 10e6)
	return "http://" + mgr.MetricsAddr().String() + "/metrics"
}

func TestMetricsAuthentication(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(restConfig)
	_, readerToken, otherToken := metricsRBAC(t, cs)

	// A manager whose own identity cannot create reviews fails closed.
	denied, err := manager.New(&rest.Config{Host: restConfig.Host, TLSClientConfig: rest.TLSClientConfig{CAData: restConfig.CAData}},
		manager.Options{Logger: testLogger(), Metrics: manager.MetricsOptions{BindAddress: "127.0.0.1:0", FilterProvider: manager.WithAuthenticationAndAuthorization}})
	require.NoError(t, err)

	mgr := newManager(t, restConfig, manager.Options{Metrics: manager.MetricsOptions{
		BindAddress: "127.0.0.1:0", FilterProvider: manager.WithAuthenticationAndAuthorization}})
	url := startMetrics(t, mgr)

	for _, tc := range []struct {
		name, header string
		want         int
		wantBody     string
	}{
		{"no token", "", http.StatusUnauthorized, "Unauthorized"},
		{"other scheme", "Basic " + readerToken, http.StatusUnauthorized, "Unauthorized"},
		{"invalid token", "Bearer not-a-token", http.StatusUnauthorized, "Unauthorized"},
		{"valid token without permission", "Bearer " + otherToken, http.StatusForbidden, "Authorization denied for user system:serviceaccount:default:metrics-other-"},
		{"authorized token", "Bearer " + readerToken, http.StatusOK, "# HELP"},
		{"lower-case bearer", "bearer " + readerToken, http.StatusOK, "# HELP"},
		{"upper-case bearer", "BEARER " + readerToken, http.StatusOK, "# HELP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := scrape(t, url, tc.header)
			assert.Equal(t, tc.want, code)
			assert.Contains(t, body, tc.wantBody)
		})
	}

	deniedURL := startMetrics(t, denied)
	assert.Equal(t, http.StatusInternalServerError, status(t, deniedURL, readerToken),
		"a review that cannot be made denies the request")
}

func TestMetricsAuthCachesReviews(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(restConfig)
	_, readerToken, otherToken := metricsRBAC(t, cs)
	var rc reviewCounter
	mgr := newManager(t, restConfig, manager.Options{Metrics: manager.MetricsOptions{
		BindAddress: "127.0.0.1:0", FilterProvider: rc.provider(manager.MetricsAuthOptions{CacheSize: 100})}})
	url := startMetrics(t, mgr)

	for i := range 30 {
		require.Equal(t, http.StatusOK, status(t, url, readerToken), "scrape %d", i)
	}
	assert.Equal(t, [2]int64{1, 1}, rc.counts(), "30 scrapes: one TokenReview, one SubjectAccessReview")

	code, _ := scrape(t, url, "bearer "+readerToken)
	assert.Equal(t, http.StatusOK, code, "lower-case bearer")
	assert.Equal(t, [2]int64{1, 1}, rc.counts(), "the scheme's case is not part of the key")

	// Concurrent scrapes with a token not seen yet share one review of each kind.
	var wg sync.WaitGroup
	codes := make(chan int, 20)
	for range 20 {
		wg.Go(func() {
			code, _ := scrape(t, url, "Bearer "+otherToken)
			codes <- code
		})
	}
	wg.Wait()
	close(codes)
	for code := range codes {
		assert.Equal(t, http.StatusForbidden, code)
	}
	assert.Equal(t, [2]int64{2, 2}, rc.counts(), "20 concurrent scrapes: one more review of each kind")

	// Garbage tokens cost a TokenReview each, but the cache of rejected
	// tokens holds at most CacheSize of them and evicts none of the valid.
	for i := range 400 {
		require.Equal(t, http.StatusUnauthorized, status(t, url, fmt.Sprintf("garbage-%d", i)))
	}
	assert.Equal(t, [2]int64{402, 2}, rc.counts(), "400 distinct garbage tokens")
	assert.Equal(t, http.StatusUnauthorized, status(t, url, "garbage-399"))
	assert.Equal(t, [2]int64{402, 2}, rc.counts(), "a recent garbage token is cached")
	assert.Equal(t, http.StatusUnauthorized, status(t, url, "garbage-0"))
	assert.Equal(t, [2]int64{403, 2}, rc.counts(), "the oldest garbage token was evicted: the cache is bounded")
	assert.Equal(t, http.StatusOK, status(t, url, readerToken))
	assert.Equal(t, [2]int64{403, 2}, rc.counts(), "the valid token stayed cached")
}

func TestMetricsAuthDoesNotCacheErrors(t *testing.T) {
	var rc reviewCounter
	// No credentials: the API server refuses the manager's TokenReviews.
	mgr := newManager(t, &rest.Config{Host: restConfig.Host, TLSClientConfig: rest.TLSClientConfig{CAData: restConfig.CAData}},
		manager.Options{Metrics: manager.MetricsOptions{BindAddress: "127.0.0.1:0", FilterProvider: rc.provider(manager.MetricsAuthOptions{})}})
	url := startMetrics(t, mgr)
	for i := range 3 {
		assert.Equal(t, http.StatusInternalServerError, status(t, url, "some-token"))
		assert.Equal(t, [2]int64{int64(i + 1), 0}, rc.counts(), "every request tries again")
	}
}

func TestMetricsAuthRevocationDelay(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(restConfig)
	reader, readerToken, _ := metricsRBAC(t, cs)
	var rc reviewCounter
	const allowedTTL = 2 * time.Second
	mgr := newManager(t, restConfig, manager.Options{Metrics: manager.MetricsOptions{
		BindAddress: "127.0.0.1:0", FilterProvider: rc.provider(manager.MetricsAuthOptions{AllowedTTL: allowedTTL, DeniedTTL: -1})}})
	url := startMetrics(t, mgr)

	// The cache stamps the allowed answer's expiry after the review returns,
	// so it is no earlier than AllowedTTL from the moment this request is
	// sent: measure from then (measuring from the response failed in CI by
	// the response's 14 ms).
	allowedAt := time.Now()
	require.Equal(t, http.StatusOK, status(t, url, readerToken))
	require.NoError(t, cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), reader, metav1.DeleteOptions{}))
	// Wait until the API server itself denies the user, so that only the cache still allows.
	require.Eventually(t, func() bool {
		sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User:                  "system:serviceaccount:default:" + reader,
				NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
			},
		}, metav1.CreateOptions{})
		return err == nil && !sar.Status.Allowed
	}, 10*time.Second, 20*time.Millisecond)
	if time.Since(allowedAt) < allowedTTL-200*time.Millisecond {
		assert.Equal(t, http.StatusOK, status(t, url, readerToken), "the revoked permission is still cached")
		assert.Equal(t, int64(1), rc.accessReviews.Load())
	}
	require.Eventually(t, func() bool { return status(t, url, readerToken) == http.StatusForbidden },
		allowedTTL+5*time.Second, 50*time.Millisecond, "denied once the allowed answer expires")
	assert.GreaterOrEqual(t, time.Since(allowedAt), allowedTTL, "not before AllowedTTL")
}

func status(t *testing.T, url, token string) int {
	t.Helper()
	header := ""
	if token != "" {
		header = "Bearer " + token
	}
	code, _ := scrape(t, url, header)
	return code
}

// scrape gets url with the Authorization header, if any, and returns the
// status and body.
func scrape(t *testing.T, url, authorization string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}
