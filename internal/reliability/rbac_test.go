package reliability_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// TestForbiddenKind runs two controllers as a user who may read
// ConfigMaps but not Secrets, on a control plane that enforces RBAC.
func TestForbiddenKind(t *testing.T) {
	env := &envtest.Environment{Authorization: "RBAC"}
	cfg, err := env.Start()
	require.NoError(t, err)
	defer func() { assert.NoError(t, env.Stop()) }()
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "rbac-"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().Roles(ns.Name).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "configmaps-only"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "update", "create"}},
			{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().RoleBindings(ns.Name).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "limited"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "configmaps-only"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: "limited", APIGroup: "rbac.authorization.k8s.io"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, n := range []string{"a", "b", "c"} {
		_, err := cs.CoreV1().ConfigMaps(ns.Name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n}, Data: map[string]string{"n": "1"}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	userCfg, err := env.AddUser(envtest.User{Name: "limited"})
	require.NoError(t, err)

	mgr := newManager(t, userCfg, ns.Name, manager.Options{HealthProbeBindAddress: "127.0.0.1:0"})
	o := newOracle(t, mgr)
	secretReconciles := 0
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.Secret{}).Named("secrets").
		WithOptions(controller.Options{CacheSyncTimeout: 10 * time.Second}).
		Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			secretReconciles++
			return reconcile.Result{}, nil
		})))
	r := start(mgr)

	// The ConfigMap controller keeps working.
	require.Eventually(t, func() bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		return o.last[ns.Name+"/a"] == 1 && o.last[ns.Name+"/b"] == 1 && o.last[ns.Name+"/c"] == 1
	}, 30*time.Second, 50*time.Millisecond, "the permitted controller reconciles")

	// The cache and /readyz name the forbidden kind.
	healthy := mgr.GetCache().Healthy()
	require.Error(t, healthy)
	assert.Contains(t, healthy.Error(), "Secret")
	assert.Contains(t, strings.ToLower(healthy.Error()), "forbidden")
	resp, err := http.Get("http://" + mgr.HealthProbeAddr().String() + "/readyz?verbose")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode, "not ready: %s", body)
	assert.Contains(t, string(body), "Secret")
	t.Logf("cache.Healthy: %v\n/readyz: %d %s", healthy, resp.StatusCode, body)

	// After CacheSyncTimeout the Secret controller fails with an error
	// naming its kind and the cause; the manager stops with it.
	var startErr error
	select {
	case startErr = <-r.done:
	case <-time.After(60 * time.Second): // hang bound: CacheSyncTimeout is 10 s
		r.cancel()
		<-r.done
		t.Fatal("the manager kept running with a controller that cannot sync")
	}
	require.Error(t, startErr)
	assert.Contains(t, startErr.Error(), "Secret")
	assert.Contains(t, strings.ToLower(startErr.Error()), "forbidden")
	assert.Zero(t, secretReconciles)
	t.Logf("manager.Start: %v", startErr)
}
