package multicluster_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/reconcile"
)

// staticProvider is the tests' Provider: the test adds and removes
// clusters while it runs.
type staticProvider struct {
	mu      sync.Mutex
	sink    multicluster.Sink
	ctx     context.Context
	cancels map[string]context.CancelFunc
	ready   chan struct{}
}

func newProvider() *staticProvider {
	return &staticProvider{cancels: map[string]context.CancelFunc{}, ready: make(chan struct{})}
}

func (p *staticProvider) Run(ctx context.Context, s multicluster.Sink) error {
	p.mu.Lock()
	p.sink, p.ctx = s, ctx
	p.mu.Unlock()
	close(p.ready)
	<-ctx.Done()
	return nil
}

// add engages name with cfg.
func (p *staticProvider) add(t testing.TB, name string, cfg *rest.Config) {
	t.Helper()
	<-p.ready
	p.mu.Lock()
	ctx, cancel := context.WithCancel(p.ctx)
	p.cancels[name] = cancel
	s := p.sink
	p.mu.Unlock()
	require.NoError(t, s.Engage(ctx, name, cfg))
}

// remove ends name's engagement.
func (p *staticProvider) remove(name string) {
	p.mu.Lock()
	cancel := p.cancels[name]
	delete(p.cancels, name)
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// testLabel selects the ConfigMaps of one test: the planes are shared.
func testLabel(t testing.TB) string {
	return strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
}

// direct returns a client that talks to cfg's API server directly.
func direct(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	return c
}

// configMap creates a ConfigMap of the test in cfg's cluster.
func configMap(t testing.TB, cfg *rest.Config, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: testLabel(t) + "-" + name,
		Labels: map[string]string{"test": testLabel(t)}}}
	require.NoError(t, direct(t, cfg).Create(context.Background(), cm))
	t.Cleanup(func() { _ = direct(t, cfg).Delete(context.Background(), cm) })
	return cm
}

// reconciled is a Reconciler that records each Request and writes
// data.cluster = req.Cluster through the client of req.Cluster.
type reconciled struct {
	fleet *multicluster.Fleet
	hold  func(reconcile.Request) // called first, may block
	mu    sync.Mutex
	reqs  []reconcile.Request
}

func (r *reconciled) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	if r.hold != nil {
		r.hold(req)
	}
	cl, err := r.fleet.GetCluster(ctx, req.Cluster)
	if err != nil {
		return reconcile.Result{}, err
	}
	var cm corev1.ConfigMap
	if err := cl.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cm.Data["cluster"] == req.Cluster {
		return reconcile.Result{}, nil
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data["cluster"] = req.Cluster
	return reconcile.Result{}, cl.GetClient().Update(ctx, &cm)
}

func (r *reconciled) seen() []reconcile.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]reconcile.Request(nil), r.reqs...)
}

// saw reports whether a reconcile named cluster and an object whose name
// ends in suffix.
func (r *reconciled) saw(cluster, suffix string) bool {
	for _, req := range r.seen() {
		if req.Cluster == cluster && strings.HasSuffix(req.Name, suffix) {
			return true
		}
	}
	return false
}

// fleetController builds a controller that watches the test's ConfigMaps
// on every cluster of the fleet, registered with the fleet.
func fleetController(t testing.TB, f *multicluster.Fleet, r reconcile.Reconciler, opts controller.Options) *controller.Controller {
	t.Helper()
	opts.Reconciler = r
	opts.Logger = testenv.Logger()
	if opts.RateLimiter == nil {
		opts.RateLimiter = controller.PerClusterRateLimiter(nil)
	}
	c, err := controller.NewUnmanaged(testLabel(t), opts)
	require.NoError(t, err)
	sel := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()["test"] == testLabel(t) })
	require.NoError(t, c.WatchClusters(controller.ClusterWatch{Source: func(cl controller.Cluster) (source.Source, error) {
		return source.Kind(cl.GetCache(), &corev1.ConfigMap{}, &handler.EnqueueRequestForObject{}, sel), nil
	}}))
	return c
}

// newFleet returns a fleet of p, with metrics on reg when reg is set.
func newFleet(t testing.TB, p multicluster.Provider, reg prometheus.Registerer) *multicluster.Fleet {
	t.Helper()
	f, err := multicluster.NewFleet(multicluster.Options{Provider: p, Logger: testenv.Logger(), Metrics: reg})
	require.NoError(t, err)
	return f
}

// eventually polls cond every 50ms for up to 30s.
func eventually(t testing.TB, cond func() bool, msg string, args ...any) {
	t.Helper()
	require.Eventually(t, cond, 30*time.Second, 50*time.Millisecond, fmt.Sprintf(msg, args...))
}

// dataOf reads data.cluster of cm in cfg's cluster.
func dataOf(t testing.TB, cfg *rest.Config, cm *corev1.ConfigMap) string {
	var got corev1.ConfigMap
	if err := direct(t, cfg).Get(context.Background(), client.ObjectKeyFromObject(cm), &got); err != nil {
		return "error: " + err.Error()
	}
	return got.Data["cluster"]
}
