package sharding_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding"
)

// Fast timings for the tests against the real API server.
const (
	realLease = 2 * time.Second
	realRenew = 1500 * time.Millisecond
	realRetry = 300 * time.Millisecond
)

// unique returns prefix with a random suffix.
func unique(prefix string) string { return prefix + "-" + string(uuid.NewUUID())[:8] }

// realLogger writes to stderr when KUBELOOP_TEST_LOG is set, else nowhere.
func realLogger() logr.Logger {
	if os.Getenv("KUBELOOP_TEST_LOG") == "" {
		return logr.FromSlogHandler(slog.NewTextHandler(io.Discard, nil))
	}
	return logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.Level(-1)}))
}

// replica is one operator process of a ring in the test process: its own
// connection to the API server (through a fault proxy), its own live
// client, label-selected cache, Ring and, optionally, a controller whose
// reconciler sits behind the ring's gate. The sharded kind is
// PodTemplate, which no other test of this package uses.
type replica struct {
	shard string
	proxy *faultproxy.Proxy
	live  client.Client
	cache *cache.InformerCache
	ring  *sharding.Ring
	gate  reconcile.Reconciler
	reg   *prometheus.Registry

	cancel  context.CancelFunc
	wg      sync.WaitGroup
	ringErr chan error
}

// newReplica starts a replica of ring with its Leases in ns; inner, when
// not nil, is run by a controller (4 workers) behind the gate.
func newReplica(t *testing.T, ringName, ns, shard string, inner reconcile.Reconciler, mutate ...func(*sharding.Options)) *replica {
	t.Helper()
	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	live, err := client.New(p.Config(), client.Options{FieldOwner: shard})
	require.NoError(t, err)
	// Resolve the kinds the Ring uses before any fault: the client's
	// mapper discovers a group on first use, and a discovery request
	// caught by a cut holds the mapper (and so every request of the
	// client, the Lease renewals included) until the connection is given
	// up.
	warm := &metav1.PartialObjectMetadataList{}
	warm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodTemplateList"))
	require.NoError(t, live.List(context.Background(), warm, client.Limit(1)))
	require.NoError(t, live.List(context.Background(), &coordinationv1.LeaseList{}, client.InNamespace(ns), client.Limit(1)))
	rp := &replica{shard: shard, proxy: p, live: live, reg: prometheus.NewRegistry(), ringErr: make(chan error, 1)}
	o := sharding.Options{
		Ring:               ringName,
		Objects:            []client.Object{&corev1.PodTemplate{}},
		Namespace:          ns,
		Shard:              shard,
		LeaseDuration:      realLease,
		RenewDeadline:      realRenew,
		RetryPeriod:        realRetry,
		SweepInterval:      300 * time.Millisecond,
		DrainCheckInterval: 100 * time.Millisecond,
		Webhook:            sharding.WebhookOptions{Disabled: true},
		Logger:             realLogger().WithName(shard),
		Metrics:            rp.reg,
	}
	for _, m := range mutate {
		m(&o)
	}
	rp.ring, err = sharding.New(live, o)
	require.NoError(t, err)
	co := cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, Logger: realLogger()}
	require.NoError(t, rp.ring.ConfigureCache(&co))
	rp.cache, err = cache.New(p.Config(), co)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	rp.cancel = cancel
	_, err = rp.cache.GetInformer(ctx, &corev1.PodTemplate{})
	require.NoError(t, err)
	rp.wg.Go(func() { _ = rp.cache.Start(ctx) })
	require.True(t, rp.cache.WaitForCacheSync(ctx))
	if inner == nil {
		inner = reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	}
	rp.gate, err = rp.ring.Reconciler(&corev1.PodTemplate{}, inner)
	require.NoError(t, err)
	rp.wg.Go(func() { rp.ringErr <- rp.ring.Run(ctx, rp.cache) })
	return rp
}

// runController runs a controller of the replica's gate on its cache.
func (rp *replica) runController(t *testing.T) {
	t.Helper()
	c, err := controller.NewUnmanaged("pt-"+rp.shard, controller.Options{
		Reconciler: rp.gate, MaxConcurrentReconciles: 4, Logger: realLogger(), SkipNameValidation: ptrTrue(),
	})
	require.NoError(t, err)
	require.NoError(t, c.Watch(source.Kind(rp.cache, &corev1.PodTemplate{}, &handler.EnqueueRequestForObject{})))
	ctx, cancel := context.WithCancel(context.Background())
	prev := rp.cancel
	rp.cancel = func() { cancel(); prev() }
	rp.wg.Go(func() { _ = c.Start(ctx) })
}

func ptrTrue() *bool { b := true; return &b }

// stop stops the replica and returns what its Ring's Start returned.
func (rp *replica) stop() error {
	rp.cancel()
	rp.wg.Wait()
	select {
	case err := <-rp.ringErr:
		return err
	default:
		return nil
	}
}

// ended returns the Ring's Start result if it returned, and whether it did.
func (rp *replica) ended() (error, bool) {
	select {
	case err := <-rp.ringErr:
		rp.ringErr <- err
		return err, true
	default:
		return nil, false
	}
}

// podTemplate is a PodTemplate in ns.
func podTemplate(ns, name string) *corev1.PodTemplate {
	return &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Template:   corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}},
	}
}

// newTestNamespace creates a namespace for one test.
func newTestNamespace(t *testing.T, c client.Client) string {
	t.Helper()
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "shard-"}}
	require.NoError(t, c.Create(context.Background(), n))
	return n.Name
}
