package reliability_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

func httpGet(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// TestSecretsNeverLeak runs a controller over a Secret holding a canary
// value, through the library's error, panic, event and metrics paths, with
// a log sink at maximum verbosity, then looks for the canary everywhere.
func TestSecretsNeverLeak(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	canary := "canary-" + string(uuid.NewUUID())
	forms := []string{canary, base64.StdEncoding.EncodeToString([]byte(canary)), canary[len(canary)-8:]}
	_, err := admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Data:       map[string][]byte{"password": []byte(canary)},
		StringData: map[string]string{"token": canary},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	_, err = admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "scraper"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	tok, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "scraper", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	require.NoError(t, err)
	// The scraper may read /metrics (and ask for pprof, which must not be
	// served), as kubebuilder's metrics-reader role
	// grants (envtest runs the API server with RBAC).
	_, err = admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics", "/debug/pprof/", "/debug/pprof/*"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: ns + "-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "scraper"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	logs := newCapture()
	mgr := newManager(t, restConfig, ns, manager.Options{
		Logger:                 logs.logger(),
		HealthProbeBindAddress: "127.0.0.1:0",
		Metrics:                manager.MetricsOptions{BindAddress: "127.0.0.1:0", FilterProvider: manager.WithAuthenticationAndAuthorization},
	})
	var calls atomic.Int64
	done := make(chan struct{})
	rec := mgr.GetEventRecorder("secret-watcher")
	require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.Secret{}).Named("secret-watcher").
		WithOptions(controller.Options{ReconcileTimeout: 30 * time.Second}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var s corev1.Secret
			if err := mgr.GetClient().Get(ctx, req.NamespacedName, &s); err != nil {
				return reconcile.Result{}, client404(err)
			}
			switch calls.Add(1) {
			case 1: // the error path
				return reconcile.Result{}, fmt.Errorf("cannot use secret %s", s.Name)
			case 2: // the panic path, with the Secret in scope
				panic(fmt.Sprintf("boom with secret %s", s.Name))
			case 3: // an invalid write: the API server's 422 goes through the error path
				bad := s.DeepCopy()
				bad.Data["not a valid key!"] = []byte("x")
				return reconcile.Result{}, mgr.GetClient().Update(ctx, bad)
			case 4: // an event about the Secret
				rec.Eventf(&s, nil, corev1.EventTypeWarning, "Checked", "Check", "checked secret %s", s.Name)
				return reconcile.Result{}, fmt.Errorf("once more")
			default:
				select {
				case <-done:
				default:
					close(done)
				}
				return reconcile.Result{}, nil
			}
		})))
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	select {
	case <-done:
	case <-time.After(convergeWithin): // hang bound
		t.Fatal("the controller did not go through every path")
	}

	// Events are written asynchronously.
	var eventsJSON []byte
	require.Eventually(t, func() bool {
		evs, err := admin.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		eventsJSON, _ = json.Marshal(evs)
		return len(evs.Items) > 0
	}, 30*time.Second, 100*time.Millisecond, "the event was recorded")

	code, metrics := httpGet(t, "http://"+mgr.MetricsAddr().String()+"/metrics", tok.Status.Token)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, metrics, "controller_runtime_reconcile_total")
	unauth, _ := httpGet(t, "http://"+mgr.MetricsAddr().String()+"/metrics", "")
	assert.Equal(t, http.StatusUnauthorized, unauth, "metrics require a token when the filter is on")

	lines := logs.all()
	var all strings.Builder
	verbose, errorsSeen := 0, 0
	for _, l := range lines {
		all.WriteString(l.text + "\n")
		if l.level > 0 {
			verbose++
		}
		if l.error {
			errorsSeen++
		}
	}
	require.Positive(t, errorsSeen, "the error and panic paths logged")
	require.Positive(t, verbose, "verbose lines were captured")
	for _, f := range forms {
		assert.NotContains(t, all.String(), f, "canary in the logs")
		assert.NotContains(t, string(eventsJSON), f, "canary in the events")
		assert.NotContains(t, metrics, f, "canary in the metrics")
	}
	t.Logf("searched %d log lines (%d verbose, %d errors), %d bytes of events, %d bytes of metrics: no canary", len(lines), verbose, errorsSeen, len(eventsJSON), len(metrics))

	// pprof is off by default: neither server answers its paths.
	assert.Nil(t, mgr.PprofAddr())
	for _, base := range []string{"http://" + mgr.MetricsAddr().String(), "http://" + mgr.HealthProbeAddr().String()} {
		code, _ := httpGet(t, base+"/debug/pprof/", tok.Status.Token)
		assert.Equal(t, http.StatusNotFound, code, "no pprof on %s", base)
	}
}
