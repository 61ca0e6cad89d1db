package manager_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/manager/healthz"
)

func TestProbesAndMetrics(t *testing.T) {
	lease := unique("probes-and-metrics")
	mgr := newManager(t, restConfig, manager.Options{
		LeaderElection:          true,
		LeaderElectionID:        lease,
		LeaderElectionNamespace: "default",
		LeaseDuration:           leaseDuration,
		RenewDeadline:           renewDeadline,
		RetryPeriod:             retryPeriod,
		HealthProbeBindAddress:  "127.0.0.1:0",
		PprofBindAddress:        "127.0.0.1:0",
		Metrics: manager.MetricsOptions{
			BindAddress:   "127.0.0.1:0",
			ExtraHandlers: map[string]http.Handler{"/extra": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "extra") })},
		},
	})
	_, err := mgr.GetCache().GetInformer(context.Background(), &corev1.ConfigMap{})
	require.NoError(t, err)
	require.NoError(t, mgr.AddHealthzCheck("ping", healthz.Ping))
	widgets := prometheus.NewCounter(prometheus.CounterOpts{Name: "widgets_total", Help: "Widgets."})
	require.NoError(t, mgr.Metrics().Register(widgets))
	widgets.Add(3)

	assert.Nil(t, mgr.MetricsAddr(), "no address before Start")
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	waitClosed(t, mgr.Elected(), 30*time.Second, "elected")

	probes := "http://" + mgr.HealthProbeAddr().String()
	metrics := "http://" + mgr.MetricsAddr().String()

	code, body := get(t, probes+"/readyz?verbose")
	assert.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "[+]cache ok\ncheck passed\n", body)
	code, body = get(t, probes+"/healthz")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", body)
	code, _ = get(t, probes+"/healthz/ping")
	assert.Equal(t, http.StatusOK, code)

	code, body = get(t, metrics+"/metrics")
	require.Equal(t, http.StatusOK, code)
	for _, want := range []string{
		`rest_client_requests_total{code="200",host="` + strings.TrimPrefix(restConfig.Host, "https://") + `",method="GET"}`,
		`rest_client_request_duration_seconds_bucket{host=`,
		`leader_election_master_status{name="` + lease + `"} 1`,
		`widgets_total 3`,
		`go_goroutines `,
		`process_start_time_seconds `,
	} {
		assert.True(t, strings.Contains(body, want), "/metrics lacks %s", want)
	}
	code, body = get(t, metrics+"/extra")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "extra", body)

	code, body = get(t, "http://"+mgr.PprofAddr().String()+"/debug/pprof/goroutine?debug=1")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "goroutine profile:")
}

func TestServersOffByDefault(t *testing.T) {
	mgr := newManager(t, restConfig, manager.Options{Metrics: manager.MetricsOptions{BindAddress: "0"}})
	r := start(mgr)
	waitClosed(t, mgr.Elected(), 30*time.Second, "started")
	assert.Nil(t, mgr.MetricsAddr())
	assert.Nil(t, mgr.HealthProbeAddr())
	assert.Nil(t, mgr.PprofAddr())
	require.NoError(t, r.stop(t))
}

func TestListenFailureFailsStart(t *testing.T) {
	first := newManager(t, restConfig, manager.Options{HealthProbeBindAddress: "127.0.0.1:0"})
	r := start(first)
	defer func() { assert.NoError(t, r.stop(t)) }()
	waitClosed(t, first.Elected(), 30*time.Second, "started")

	second := newManager(t, restConfig, manager.Options{HealthProbeBindAddress: first.HealthProbeAddr().String()})
	err := second.Start(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "manager: health probe server: listen on "+first.HealthProbeAddr().String())
}

// A replica whose credentials cannot list a watched kind is not ready, and
// the probe says which kind fails and why.
func TestReadinessNamesFailingKind(t *testing.T) {
	cfg, err := testEnv.AddUser(envtest.User{Name: unique("no-secrets")})
	require.NoError(t, err)
	mgr := newManager(t, cfg, manager.Options{HealthProbeBindAddress: "127.0.0.1:0"})
	_, err = mgr.GetCache().GetInformer(context.Background(), &corev1.Secret{})
	require.NoError(t, err)
	r := start(mgr)

	require.Eventually(t, func() bool { return mgr.HealthProbeAddr() != nil }, 30*time.Second, 10*time.Millisecond)
	probes := "http://" + mgr.HealthProbeAddr().String()
	var body string
	require.Eventually(t, func() bool {
		var code int
		code, body = get(t, probes+"/readyz")
		return code == http.StatusInternalServerError && strings.Contains(body, "forbidden")
	}, 30*time.Second, 50*time.Millisecond, "readyz never reported the forbidden list: %s", body)
	t.Logf("readyz: %s", body)
	assert.True(t, containsLine(body, "[-]cache failed: caches have not synced yet"), body)
	assert.Contains(t, body, "Secret")
	select {
	case <-mgr.Elected():
		t.Fatal("leader-only runnables started although the caches never synced")
	default:
	}
	require.NoError(t, r.stop(t), "stopping an unsynced manager is a normal stop")
}

func TestEventsAndClient(t *testing.T) {
	mgr := newManager(t, restConfig, manager.Options{})
	recorder := mgr.GetEventRecorder("event-test")
	r := start(mgr)
	defer func() { assert.NoError(t, r.stop(t)) }()
	waitClosed(t, mgr.Elected(), 30*time.Second, "started")
	ctx := context.Background()

	// The manager's client reads its own writes through the cache.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: unique("events-and-client")}, Data: map[string]string{"a": "1"}}
	require.NoError(t, mgr.GetClient().Create(ctx, cm))
	var got corev1.ConfigMap
	require.NoError(t, mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(cm), &got))
	assert.Equal(t, "1", got.Data["a"])
	var live corev1.ConfigMap
	require.NoError(t, mgr.GetAPIReader().Get(ctx, client.ObjectKeyFromObject(cm), &live))
	assert.Equal(t, cm.ResourceVersion, live.ResourceVersion)

	recorder.Eventf(cm, nil, corev1.EventTypeNormal, "Tested", "Test", "hello %s", "world")
	cs := kubernetes.NewForConfigOrDie(restConfig)
	var found *eventsv1.Event
	require.Eventually(t, func() bool {
		list, err := cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for i := range list.Items {
			if list.Items[i].Reason == "Tested" && list.Items[i].Regarding.Name == cm.Name {
				found = &list.Items[i]
				return true
			}
		}
		return false
	}, 30*time.Second, 50*time.Millisecond)
	assert.Equal(t, "event-test", found.ReportingController)
	assert.Equal(t, "hello world", found.Note)
	assert.Equal(t, "Test", found.Action)
}
