package reliability_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/manager"
)

// recoverWithin is the hang bound on an informer's recovery after the
// proxy passes traffic again. The documented bound is about 3 s (the
// cache's prober sees the server within 0.5 s, the informers it releases
// spread over at most 1 s, then one list); the margin is for a shared
// machine. client-go's reflector backoff took 44-52 s after a 20 s cut.
const recoverWithin = 15 * time.Second

// outageFault is a way of cutting the manager off its API server.
type outageFault struct {
	name  string
	begin func(p *faultproxy.Proxy) (end func())
}

var (
	blackhole = outageFault{"blackhole", func(p *faultproxy.Proxy) func() {
		p.Blackhole(true)
		return func() { p.Blackhole(false) }
	}}
	resetConns = outageFault{"reset", func(p *faultproxy.Proxy) func() {
		p.Reject(faultproxy.ResetConnections)
		return func() { p.Reject(faultproxy.Pass) }
	}}
	closeConns = outageFault{"close", func(p *faultproxy.Proxy) func() {
		p.Reject(faultproxy.CloseConnections)
		return func() { p.Reject(faultproxy.Pass) }
	}}
	unavailable = outageFault{"503", func(p *faultproxy.Proxy) func() {
		remove := p.AddRule(faultproxy.Rule{Status: http.StatusServiceUnavailable})
		p.CutWatches()
		return remove
	}}
)

// recoveryKind is one of the kinds the recovery rig's manager caches: one
// object of it is changed during each outage.
type recoveryKind struct {
	resource string // the path suffix its LISTs end with
	obj      func() client.Object
	update   func(ctx context.Context, ns, name, round string) error
}

var recoveryKinds = []recoveryKind{
	{"/configmaps", func() client.Object { return &corev1.ConfigMap{} }, func(ctx context.Context, ns, name, round string) error {
		_, err := admin.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, roundPatch(round), metav1.PatchOptions{})
		return err
	}},
	{"/secrets", func() client.Object { return &corev1.Secret{} }, func(ctx context.Context, ns, name, round string) error {
		_, err := admin.CoreV1().Secrets(ns).Patch(ctx, name, types.MergePatchType, roundPatch(round), metav1.PatchOptions{})
		return err
	}},
	{"/serviceaccounts", func() client.Object { return &corev1.ServiceAccount{} }, func(ctx context.Context, ns, name, round string) error {
		_, err := admin.CoreV1().ServiceAccounts(ns).Patch(ctx, name, types.MergePatchType, roundPatch(round), metav1.PatchOptions{})
		return err
	}},
}

func roundPatch(round string) []byte {
	return []byte(`{"metadata":{"labels":{"round":"` + round + `"}}}`)
}

// recoveryRig is a manager caching three kinds in ns through p.
type recoveryRig struct {
	p     *faultproxy.Proxy
	mgr   *manager.Manager
	ns    string
	round int
}

const recoveryObject = "rec"

func newRecoveryRig(t *testing.T) *recoveryRig {
	t.Helper()
	ctx := context.Background()
	ns := newNamespace(t)
	_, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: recoveryObject}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: recoveryObject}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: recoveryObject}}, metav1.CreateOptions{})
	require.NoError(t, err)
	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	mgr := newManager(t, p.Config(), ns, manager.Options{})
	for _, k := range recoveryKinds {
		_, err := mgr.GetCache().GetInformer(ctx, k.obj())
		require.NoError(t, err)
	}
	r := start(mgr)
	t.Cleanup(func() { assert.NoError(t, r.stop(t)) })
	r.waitStarted(t)
	require.Eventually(t, func() bool { return p.OpenWatches() >= len(recoveryKinds) }, convergeWithin, 5*time.Millisecond,
		"every informer watches")
	return &recoveryRig{p: p, mgr: mgr, ns: ns}
}

// outage cuts the manager off for d with f, changes one object of each
// kind meanwhile, and returns, per kind, how long after the proxy passed
// traffic again the cache had the change, and how many LISTs it sent.
func (rig *recoveryRig) outage(t *testing.T, f outageFault, d time.Duration) (took map[string]time.Duration, lists map[string]int) {
	t.Helper()
	ctx := context.Background()
	rig.round++
	round := strconv.Itoa(rig.round)
	end := f.begin(rig.p)
	time.Sleep(d / 2)
	for _, k := range recoveryKinds {
		require.NoError(t, k.update(ctx, rig.ns, recoveryObject, round))
	}
	time.Sleep(d - d/2)
	healthy := rig.mgr.GetCache().Healthy()
	end()
	back := time.Now()

	took = map[string]time.Duration{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, k := range recoveryKinds {
		wg.Go(func() {
			deadline := back.Add(convergeWithin)
			for time.Now().Before(deadline) {
				obj := k.obj()
				err := rig.mgr.GetCache().Get(ctx, client.ObjectKey{Namespace: rig.ns, Name: recoveryObject}, obj)
				if err == nil && obj.GetLabels()["round"] == round {
					mu.Lock()
					took[k.resource] = time.Since(back)
					mu.Unlock()
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	// Let a late relist show before counting.
	time.Sleep(time.Second)
	lists = map[string]int{}
	for _, k := range recoveryKinds {
		lists[k.resource] = resyncs(rig.p, back, k.resource)
	}
	t.Logf("%s for %s (cache during it: %v): change applied after %v; LISTs after restore %v",
		f.name, d, healthy, took, lists)
	return took, lists
}

// checkRecovery asserts what outage measured.
func checkRecovery(t *testing.T, name string, took map[string]time.Duration, lists map[string]int) {
	t.Helper()
	for _, k := range recoveryKinds {
		d, ok := took[k.resource]
		if assert.True(t, ok, "%s: %s never got the change made during the outage", name, k.resource) {
			assert.LessOrEqual(t, d, recoverWithin, "%s: %s recovered within the bound", name, k.resource)
		}
		assert.LessOrEqual(t, lists[k.resource], 2, "%s: %s relisted at most twice", name, k.resource)
	}
}

// TestRecoveryWithinSecondsOfTheServerComingBack cuts one manager off its
// API server again and again (1 s to 20 s, four ways) and measures, for
// each of its three informers, the time from the proxy passing traffic
// again to the cache holding a change made during the outage, and the
// LISTs each sent meanwhile.
func TestRecoveryWithinSecondsOfTheServerComingBack(t *testing.T) {
	rig := newRecoveryRig(t)
	var worst time.Duration
	var summary []string
	for _, tc := range []struct {
		f outageFault
		d time.Duration
	}{
		{blackhole, time.Second},
		{resetConns, time.Second},
		{closeConns, 5 * time.Second},
		{unavailable, 5 * time.Second},
		{blackhole, 20 * time.Second},
		{closeConns, time.Second},
	} {
		name := tc.f.name + " " + tc.d.String()
		took, lists := rig.outage(t, tc.f, tc.d)
		checkRecovery(t, name, took, lists)
		var slowest time.Duration
		for _, d := range took {
			slowest = max(slowest, d)
		}
		worst = max(worst, slowest)
		summary = append(summary, name+": "+slowest.Round(10*time.Millisecond).String())
	}
	t.Logf("slowest informer per outage: %s; worst %s", strings.Join(summary, ", "), worst)
}
