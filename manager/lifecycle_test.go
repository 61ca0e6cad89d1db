package manager_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"net/http"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/manager"
)

func TestStartAndStopOrder(t *testing.T) {
	mgr := newManager(t, restConfig, manager.Options{})
	l := &log{}
	// A kind the cache must sync before any runnable starts.
	_, err := mgr.GetCache().GetInformer(context.Background(), &corev1.ConfigMap{})
	require.NoError(t, err)

	leaderDefault := newBlocking("leader-by-default", l)
	leaderExplicit := leaderAware{newBlocking("leader-explicit", l), true}
	other := leaderAware{newBlocking("other", l), false}
	// Every runnable finds the caches synced when it starts.
	var unsynced atomic.Int32
	for _, b := range []*blocking{leaderDefault, leaderExplicit.blocking, other.blocking} {
		b.onStart = func() {
			short, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			defer cancel()
			if !mgr.GetCache().WaitForCacheSync(short) {
				unsynced.Add(1)
			}
		}
	}
	for _, r := range []manager.Runnable{leaderDefault, leaderExplicit, other} {
		require.NoError(t, mgr.Add(r))
	}

	r := start(mgr)
	waitClosed(t, mgr.Elected(), 30*time.Second, "leader-only runnables started")
	waitClosed(t, leaderDefault.started, 10*time.Second, "leader-by-default started")
	waitClosed(t, leaderExplicit.started, 10*time.Second, "leader-explicit started")
	waitClosed(t, other.started, 10*time.Second, "other started")
	require.NoError(t, r.stop(t))

	events := l.list()
	assert.Zero(t, unsynced.Load(), "caches synced before runnables started")
	// Leader-only runnables stop before the others. (That the others start
	// first is visible on a standby: see the leader election tests.)
	for _, leader := range []string{"leader-by-default", "leader-explicit"} {
		assert.Less(t, indexOf(events, "stop "+leader), indexOf(events, "stop other"), events)
	}
	assert.Len(t, events, 6, events)
}

func TestFirstErrorStopsEverything(t *testing.T) {
	mgr := newManager(t, restConfig, manager.Options{})
	l := &log{}
	other := leaderAware{newBlocking("other", l), false}
	leader := newBlocking("leader", l)
	boom := errors.New("boom")
	failing := manager.RunnableFunc(func(ctx context.Context) error {
		<-leader.started
		return boom
	})
	for _, r := range []manager.Runnable{other, leader, failing} {
		require.NoError(t, mgr.Add(r))
	}

	err := start(mgr).wait(t, 30*time.Second)
	require.Error(t, err)
	assert.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "manager.RunnableFunc: boom")
	events := l.list()
	assert.Contains(t, events, "stop other")
	assert.Contains(t, events, "stop leader")
}

func TestGracefulShutdownWaitsForInFlightWork(t *testing.T) {
	mgr := newManager(t, restConfig, manager.Options{GracefulShutdownTimeout: 30 * time.Second})
	l := &log{}
	slow := newBlocking("slow", l)
	var finished atomic.Bool
	slow.onCancel = func() {
		time.Sleep(300 * time.Millisecond) // finishing in-flight work
		finished.Store(true)
	}
	require.NoError(t, mgr.Add(slow))
	r := start(mgr)
	waitClosed(t, slow.started, 30*time.Second, "slow started")
	require.NoError(t, r.stop(t))
	assert.True(t, finished.Load(), "Start returned before the in-flight runnable finished")
}

func TestGracefulShutdownTimeout(t *testing.T) {
	mgr := newManager(t, restConfig, manager.Options{GracefulShutdownTimeout: 500 * time.Millisecond})
	release := make(chan struct{})
	returned := make(chan struct{})
	started := make(chan struct{})
	stubborn := manager.RunnableFunc(func(ctx context.Context) error {
		defer close(returned)
		close(started)
		<-release // ignores ctx
		return nil
	})
	require.NoError(t, mgr.Add(stubborn))
	r := start(mgr)
	waitClosed(t, started, 30*time.Second, "stubborn started")
	begin := time.Now()
	err := r.stop(t)
	took := time.Since(begin)
	t.Logf("Start returned %s after cancel with a 500ms graceful timeout", took)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "graceful shutdown timed out after 500ms")
	assert.Contains(t, err.Error(), "manager.RunnableFunc", "the error names what is still running")
	assert.GreaterOrEqual(t, took, 500*time.Millisecond)

	close(release)
	<-returned
}

func TestStartTwice(t *testing.T) {
	mgr := newManager(t, restConfig, manager.Options{})
	r := start(mgr)
	waitClosed(t, mgr.Elected(), 30*time.Second, "started")
	assert.EqualError(t, mgr.Start(context.Background()), "manager: already started")
	require.NoError(t, r.stop(t))
	assert.EqualError(t, mgr.Start(context.Background()), "manager: already started")
}

func TestAddAfterStartAndAfterStop(t *testing.T) {
	mgr := newManager(t, restConfig, manager.Options{})
	r := start(mgr)
	waitClosed(t, mgr.Elected(), 30*time.Second, "started")

	l := &log{}
	late := newBlocking("late-leader", l)
	lateOther := leaderAware{newBlocking("late-other", l), false}
	require.NoError(t, mgr.Add(late))
	require.NoError(t, mgr.Add(lateOther))
	waitClosed(t, late.started, 10*time.Second, "late leader-only runnable started")
	waitClosed(t, lateOther.started, 10*time.Second, "late runnable started")
	require.NoError(t, r.stop(t))
	assert.ElementsMatch(t, []string{"start late-leader", "start late-other", "stop late-leader", "stop late-other"}, l.list())

	err := mgr.Add(newBlocking("too-late", l))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "manager is stopping")
}

// fakeController has the methods the manager looks for on controllers.
type fakeController struct {
	manager.RunnableFunc
	name string
}

func (f fakeController) ControllerName() string   { return f.name }
func (f fakeController) NeedLeaderElection() bool { return true }

func TestDuplicateControllerName(t *testing.T) {
	noop := manager.RunnableFunc(func(ctx context.Context) error { <-ctx.Done(); return nil })
	mgr := newManager(t, restConfig, manager.Options{})
	require.NoError(t, mgr.Add(fakeController{noop, "widgets"}))
	err := mgr.Add(fakeController{noop, "widgets"})
	assert.EqualError(t, err, `manager: controller name "widgets" is already used by this manager`)
	require.NoError(t, mgr.Add(fakeController{noop, "gadgets"}))

	// Names are scoped to one manager.
	other := newManager(t, restConfig, manager.Options{})
	assert.NoError(t, other.Add(fakeController{noop, "widgets"}))
	assert.Error(t, mgr.Add(nil))
}

func TestNewRejectsBadOptions(t *testing.T) {
	_, err := manager.New(restConfig, manager.Options{
		LeaderElection:         true,
		HealthProbeBindAddress: ":0",
		ReadinessEndpointName:  "/same",
		LivenessEndpointName:   "/same",
		Metrics:                manager.MetricsOptions{ExtraHandlers: map[string]http.Handler{"/metrics": http.NotFoundHandler()}},
	})
	require.Error(t, err)
	for _, want := range []string{
		"LeaderElectionID is required with LeaderElection",
		`ReadinessEndpointName and LivenessEndpointName are both "/same"`,
		"Metrics.ExtraHandlers cannot replace /metrics",
	} {
		assert.Contains(t, err.Error(), want)
	}
	assert.True(t, strings.HasPrefix(err.Error(), "manager: invalid options: "), err.Error())

	_, err = manager.New(nil, manager.Options{})
	assert.EqualError(t, err, "manager: rest.Config is nil")
}

func TestAddedCachesStartFirst(t *testing.T) {
	mgr := newManager(t, restConfig, manager.Options{})
	require.NoError(t, mgr.Add(mgr.GetCache()), "adding the manager's own cache is a no-op")

	extra, err := cache.New(restConfig, cache.Options{Logger: testLogger()})
	require.NoError(t, err)
	_, err = extra.GetInformer(context.Background(), &corev1.Secret{})
	require.NoError(t, err)
	l := &log{}
	user := newBlocking("user", l)
	var extraSynced atomic.Bool
	user.onStart = func() {
		short, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		extraSynced.Store(extra.WaitForCacheSync(short))
	}
	require.NoError(t, mgr.Add(user))
	require.NoError(t, mgr.Add(extra))

	r := start(mgr)
	waitClosed(t, user.started, 30*time.Second, "user runnable started")
	require.NoError(t, r.stop(t), "the manager's cache was not started twice")
	assert.True(t, extraSynced.Load(), "an added cache syncs before runnables start")
}
