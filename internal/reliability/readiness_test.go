package reliability_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/manager"
)

// redWithin is the hang bound for readiness to turn red. The documented
// bound is about 3 s (three unanswered requests, which client-go sends a
// second apart); the margin is for a shared machine.
const redWithin = 30 * time.Second

// readyz returns the status and body of the manager's /readyz.
func readyz(t *testing.T, mgr *manager.Manager) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + mgr.HealthProbeAddr().String() + "/readyz?verbose")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestReadinessSeesConnectionsClosedOrReset puts the manager behind a load
// balancer that has lost its backend: every connection is accepted and
// closed at once (FIN), or reset (RST). client-go retries such requests
// without reporting them, and its watch returns an empty watch with no
// error, so the cache used to stay healthy for as long as it lasted.
func TestReadinessSeesConnectionsClosedOrReset(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode faultproxy.RejectMode
	}{
		{name: "FIN", mode: faultproxy.CloseConnections},
		{name: "RST", mode: faultproxy.ResetConnections},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			names := configMaps(t, ns, 3)
			p, err := faultproxy.New(restConfig)
			require.NoError(t, err)
			t.Cleanup(func() { _ = p.Close() })
			mgr := newManager(t, p.Config(), ns, manager.Options{HealthProbeBindAddress: "127.0.0.1:0"})
			_, err = mgr.GetCache().GetInformer(context.Background(), &corev1.ConfigMap{})
			require.NoError(t, err)
			r := start(mgr)
			t.Cleanup(func() { assert.NoError(t, r.stop(t)) })
			r.waitStarted(t)
			require.Eventually(t, func() bool { code, _ := readyz(t, mgr); return code == http.StatusOK }, convergeWithin, 50*time.Millisecond)

			cut := time.Now()
			ended := p.Reject(tc.mode)
			t.Logf("%d open connections ended", ended)
			require.Eventually(t, func() bool { return mgr.GetCache().Healthy() != nil }, redWithin, 20*time.Millisecond,
				"connections closed on arrival show in Healthy")
			red := time.Since(cut)
			healthy := mgr.GetCache().Healthy()
			t.Logf("Healthy after %s: %v", red, healthy)
			assert.Contains(t, healthy.Error(), "ConfigMap")
			code, body := readyz(t, mgr)
			assert.NotEqual(t, http.StatusOK, code, "/readyz: %s", body)
			assert.Contains(t, body, "ConfigMap")
			assert.Positive(t, p.Rejected(), "the fault was exercised")

			// A change made during the outage arrives once the server is back.
			_, err = admin.CoreV1().ConfigMaps(ns).Update(context.Background(), &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: names[0], Namespace: ns}, Data: map[string]string{"n": "after"}}, metav1.UpdateOptions{})
			require.NoError(t, err)
			p.Reject(faultproxy.Pass)
			back := time.Now()
			require.Eventually(t, func() bool {
				code, _ := readyz(t, mgr)
				return code == http.StatusOK && mgr.GetCache().Healthy() == nil
			}, convergeWithin, 20*time.Millisecond, "ready again once connections are served")
			green := time.Since(back)
			require.Eventually(t, func() bool {
				var cm corev1.ConfigMap
				err := mgr.GetCache().Get(context.Background(), client.ObjectKey{Namespace: ns, Name: names[0]}, &cm)
				return err == nil && cm.Data["n"] == "after"
			}, convergeWithin, 20*time.Millisecond)
			t.Logf("%s: red %s after the fault began, green %s after it ended", tc.name, red, green)
		})
	}
}

// TestWatchEndsDoNotFlapReadiness ends every watch a moment after it
// opens, as the API server does when a watch's timeout passes, with and
// without events: the cache stays healthy throughout.
func TestWatchEndsDoNotFlapReadiness(t *testing.T) {
	ns := newNamespace(t)
	names := configMaps(t, ns, 3)
	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	mgr := newManager(t, p.Config(), ns, manager.Options{})
	_, err = mgr.GetCache().GetInformer(context.Background(), &corev1.ConfigMap{})
	require.NoError(t, err)
	r := start(mgr)
	t.Cleanup(func() { assert.NoError(t, r.stop(t)) })
	r.waitStarted(t)

	p.SetWatchLifetime(200 * time.Millisecond)
	since := time.Now()
	var writes atomic.Int32
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // changes in the first half, none in the second
		defer close(done)
		for i := 0; time.Since(since) < 2*time.Second; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if bump(context.Background(), admin, ns, names[i%len(names)], i+1) == nil {
				writes.Add(1)
			}
		}
	}()
	var unhealthy []string
	for time.Since(since) < 5*time.Second {
		if err := mgr.GetCache().Healthy(); err != nil {
			unhealthy = append(unhealthy, err.Error())
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	<-done
	watches := p.Count(since, func(rec faultproxy.Record) bool { return rec.Watch })
	t.Logf("%d watches opened in 5s, %d writes", watches, writes.Load())
	assert.Greater(t, watches, 5, "the watches were ended and re-opened")
	assert.Empty(t, unhealthy, "watches that end are routine: %s", strings.Join(unhealthy, "; "))
}
