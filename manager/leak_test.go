package manager_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/kubeloop/kubeloop/manager"
)

// Once Start returns, nothing the manager started is left running: servers,
// informers, the elector, the event broadcaster.
func TestNoGoroutineLeftAfterStart(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	opts := electionOptions(unique("no-leak"), true)
	opts.HealthProbeBindAddress = "127.0.0.1:0"
	opts.Metrics.BindAddress = "127.0.0.1:0"
	mgr := newManager(t, restConfig, opts)
	_, err := mgr.GetCache().GetInformer(context.Background(), &corev1.ConfigMap{})
	require.NoError(t, err)
	require.NoError(t, mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		mgr.GetEventRecorder("no-leak").Eventf(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}},
			nil, corev1.EventTypeNormal, "Started", "Start", "leader-only work started")
		<-ctx.Done()
		return nil
	})))
	r := start(mgr)
	waitClosed(t, mgr.Elected(), 30*time.Second, "elected")
	get(t, "http://"+mgr.HealthProbeAddr().String()+"/readyz")
	get(t, "http://"+mgr.MetricsAddr().String()+"/metrics")
	require.NoError(t, r.stop(t))

	// Start closed its idle connections, but a connection whose last
	// request the shutdown aborted becomes idle a moment later (x/net/http2
	// cleans streams up asynchronously) and stays in client-go's
	// process-wide transport pool until its idle timeout. Close those
	// too, as controller-runtime's leak tests do.
	assert.Eventually(t, func() bool {
		utilnet.CloseIdleConnectionsFor(mgr.GetHTTPClient().Transport)
		return goleak.Find(ignore) == nil
	}, 10*time.Second, 50*time.Millisecond)
	goleak.VerifyNone(t, ignore)
}
