package sharding_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/client/interceptor"
	"github.com/kubeloop/kubeloop/sharding"
)

const (
	ringName = "test"
	ns       = "ops"
)

var (
	shardKey = sharding.ShardLabel(ringName)
	drainKey = sharding.DrainLabel(ringName)
)

func newScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	return s
}

func newFake(t testing.TB, funcs *interceptor.Funcs, objs ...client.Object) client.Client {
	t.Helper()
	b := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(objs...)
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	return b.Build()
}

func options(shard string) sharding.Options {
	return sharding.Options{
		Ring:          ringName,
		Objects:       []client.Object{&corev1.ConfigMap{}},
		Namespace:     ns,
		Shard:         shard,
		LeaseDuration: 15 * time.Second,
		RenewDeadline: 10 * time.Second,
		RetryPeriod:   2 * time.Second,
		Metrics:       prometheus.NewRegistry(),
	}
}

func newRing(t testing.TB, c client.Client, shard string, mutate ...func(*sharding.Options)) *sharding.Ring {
	t.Helper()
	o := options(shard)
	for _, m := range mutate {
		m(&o)
	}
	r, err := sharding.New(c, o)
	require.NoError(t, err)
	return r
}

// putLease stores shard's Lease as renewed ago, with a duration of
// testLease: a test that runs in real time (not in a synctest bubble) may
// take longer than a real lease duration on a loaded machine, and a Lease
// stored as alive must not expire in the middle of it.
func putLease(t testing.TB, c client.Client, shard string, ago time.Duration) {
	t.Helper()
	putLeaseFor(t, c, shard, ago, testLease)
}

// testLease is the duration of the Leases putLease stores.
const testLease = time.Hour

// putLeaseFor stores shard's Lease as renewed ago, with duration d.
func putLeaseFor(t testing.TB, c client.Client, shard string, ago, d time.Duration) {
	t.Helper()
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ringName + "-shard-" + shard,
			Labels: map[string]string{sharding.RingLabel: ringName, sharding.ShardNameLabel: shard}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(shard + "_1"),
			LeaseDurationSeconds: ptr.To(int32(d / time.Second)),
			RenewTime:            &metav1.MicroTime{Time: time.Now().Add(-ago)},
		},
	}
	cur := &coordinationv1.Lease{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(l), cur); err == nil {
		cur.Spec = l.Spec
		require.NoError(t, c.Update(context.Background(), cur))
		return
	}
	require.NoError(t, c.Create(context.Background(), l))
}

func configMaps(n int, labels map[string]string) []client.Object {
	out := make([]client.Object, n)
	for i := range out {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cm-%04d", i)}}
		if labels != nil {
			cm.Labels = map[string]string{}
			for k, v := range labels {
				cm.Labels[k] = v
			}
		}
		out[i] = cm
	}
	return out
}

func listCMs(t testing.TB, c client.Client) []corev1.ConfigMap {
	t.Helper()
	var l corev1.ConfigMapList
	require.NoError(t, c.List(context.Background(), &l))
	return l.Items
}

// want returns the shard of a default/<name> ConfigMap on a ring of shards.
func want(shards []string, name string) string {
	return sharding.NewHashRing(shards, 0).Shard("/ConfigMap/default/" + name)
}

// startRing runs r.Start in the bubble until stop.
func startRing(t *testing.T, r *sharding.Ring) (stop func() error, done <-chan error) {
	t.Helper()
	return runRing(t, r, nil)
}

// runRing runs r.Run with the gate's reader in the bubble until stop.
func runRing(t *testing.T, r *sharding.Ring, reader client.Reader) (stop func() error, done <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	go func() {
		if reader == nil {
			ch <- r.Start(ctx)
			return
		}
		ch <- r.Run(ctx, reader)
	}()
	return func() error { cancel(); return <-ch }, ch
}
