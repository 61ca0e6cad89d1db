package manager_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
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

func TestMetricsAuthentication(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(restConfig)
	ctx := context.Background()
	reader, other := unique("metrics-reader"), unique("metrics-other")
	readerToken, otherToken := saToken(t, cs, reader), saToken(t, cs, other)
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

	// A manager whose own identity cannot create reviews fails closed.
	denied, err := manager.New(&rest.Config{Host: restConfig.Host, TLSClientConfig: rest.TLSClientConfig{CAData: restConfig.CAData}},
		manager.Options{Logger: testLogger(), Metrics: manager.MetricsOptions{BindAddress: "127.0.0.1:0", FilterProvider: manager.WithAuthenticationAndAuthorization}})
	require.NoError(t, err)

	mgr := newManager(t, restConfig, manager.Options{Metrics: manager.MetricsOptions{
		BindAddress: "127.0.0.1:0", FilterProvider: manager.WithAuthenticationAndAuthorization}})
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	require.Eventually(t, func() bool { return mgr.MetricsAddr() != nil }, 30e9, 10e6)
	url := "http://" + mgr.MetricsAddr().String() + "/metrics"

	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"invalid token", "not-a-token", http.StatusUnauthorized},
		{"valid token without permission", otherToken, http.StatusForbidden},
		{"authorized token", readerToken, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, status(t, url, tc.token))
		})
	}

	rd := start(denied)
	defer func() { _ = rd.stop(t) }()
	require.Eventually(t, func() bool { return denied.MetricsAddr() != nil }, 30e9, 10e6)
	assert.Equal(t, http.StatusInternalServerError, status(t, "http://"+denied.MetricsAddr().String()+"/metrics", readerToken),
		"a review that cannot be made denies the request")
}

func status(t *testing.T, url, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}
