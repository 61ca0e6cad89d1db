package sharding_bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/sharding"
)

const (
	objectsNS = "bench"   // the ConfigMaps
	leaseNS   = "default" // shard and sharder Leases
)

var (
	cmGK = schema.GroupKind{Kind: "ConfigMap"}

	liveOnce sync.Once
	live     client.Client
)

func liveClient() client.Client {
	liveOnce.Do(func() {
		var err error
		if live, err = client.New(cfg, client.Options{}); err != nil {
			panic(err)
		}
	})
	return live
}

// shardNames returns s0 .. s<n-1>.
func shardNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("s%d", i)
	}
	return out
}

// ring is one ring of the benchmarks and the shards its objects are
// assigned to.
type ring struct {
	name   string
	shards []string
}

func (r ring) shardOf(name string) string {
	return sharding.NewHashRing(r.shards, 0).Shard(sharding.Key(cmGK,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: objectsNS, Name: name}}))
}

// ensureConfigMaps creates cm-00000 .. cm-<n-1> in objectsNS (those that
// do not exist yet), each with -payload bytes of data and, for every ring
// of rings, the shard label of its shard on that ring.
func ensureConfigMaps(ctx context.Context, n int, rings []ring) error {
	c := liveClient()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: objectsNS}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	var have corev1.ConfigMapList
	if err := c.List(ctx, &have, client.InNamespace(objectsNS)); err != nil {
		return err
	}
	exists := map[string]bool{}
	for _, cm := range have.Items {
		exists[cm.Name] = true
	}
	data := strings.Repeat("x", *payload)
	t0 := time.Now()
	const writers = 16
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := w; i < n; i += writers {
				name := fmt.Sprintf("cm-%05d", i)
				if exists[name] {
					continue
				}
				labels := map[string]string{}
				for _, r := range rings {
					labels[sharding.ShardLabel(r.name)] = r.shardOf(name)
				}
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: objectsNS, Name: name, Labels: labels},
					Data: map[string]string{"payload": data}}
				if err := c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
					errs <- fmt.Errorf("create %s: %w", name, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if created := n - len(have.Items); created > 0 {
		fmt.Printf("# created %d ConfigMaps in %v\n", created, time.Since(t0).Round(time.Millisecond))
	}
	return nil
}

// holdLease makes holder hold the Lease name for an hour: a placeholder
// sharder (so that no replica of the ring runs the sharder) or a shard
// that is alive without a process (so that a sweep has a live shard).
func holdLease(ctx context.Context, name string, labels map[string]string) error {
	now := metav1.NowMicro()
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: leaseNS, Name: name, Labels: labels},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("placeholder"), LeaseDurationSeconds: ptr.To(int32(3600)),
			AcquireTime: &now, RenewTime: &now},
	}
	if err := liveClient().Create(ctx, l); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("lease %s: %w", name, err)
	}
	return nil
}

// parkSharder holds ring's sharder Lease (named as package sharding names
// it: <ring>-sharder) so that no replica runs the sharder.
func parkSharder(ctx context.Context, ringName string) error {
	return holdLease(ctx, ringName+"-sharder", nil)
}
