package sharding_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/sharding"
)

// TestClustersSeam: a ring with Clusters and no sharded kinds reads the
// live members with the views they published, publishes its own through
// its next renewal, admits work under its hold, and waits for admitted
// work before it releases its Lease.
func TestClustersSeam(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFake(t, nil)
		putLease(t, c, "s2", 0)
		peer := &coordinationv1.Lease{}
		require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ringName + "-shard-s2"}, peer))
		peer.Annotations = map[string]string{sharding.ViewAnnotation: "abc.1"}
		require.NoError(t, c.Update(context.Background(), peer))
		// A released Lease: its shard is gone.
		require.NoError(t, c.Create(context.Background(), &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ringName + "-shard-s0",
				Labels:      map[string]string{sharding.RingLabel: ringName, sharding.ShardNameLabel: "s0"},
				Annotations: map[string]string{sharding.ViewAnnotation: "old.3"}},
			Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To(int32(1)), RenewTime: &metav1.MicroTime{Time: time.Now()}},
		}))

		r := newRing(t, c, "s1", func(o *sharding.Options) {
			o.Objects, o.Clusters = nil, true
			o.Webhook.Disabled = true
		})
		n, ok := r.Term()
		assert.Equal(t, 0, n)
		assert.False(t, ok, "no term before Start")
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		_, ok = r.Admit(cancelled)
		assert.False(t, ok, "nothing is admitted before the Lease is held")
		assert.Equal(t, 2*time.Second, r.RetryPeriod())

		stop, _ := startRing(t, r)
		time.Sleep(time.Second)
		synctest.Wait()
		n, ok = r.Term()
		assert.Equal(t, 1, n)
		assert.True(t, ok, "the first term admits")
		members, err := r.Members(context.Background())
		require.NoError(t, err)
		assert.Equal(t, []sharding.Member{{Shard: "s1"}, {Shard: "s2", View: "abc.1"}}, members, "s0 released its Lease")

		r.PublishView("def.2")
		members, err = r.Members(context.Background())
		require.NoError(t, err)
		assert.Empty(t, members[0].View, "PublishView writes nothing itself")
		time.Sleep(r.RetryPeriod() + time.Millisecond)
		synctest.Wait()
		members, err = r.Members(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "def.2", members[0].View, "the next renewal carries it")

		adm, ok := r.Admit(context.Background())
		require.True(t, ok)
		assert.Equal(t, 1, adm.Term())
		wctx, wcancel := adm.Context(context.Background())
		require.NoError(t, wctx.Err())

		stopped := make(chan error, 1)
		go func() { stopped <- stop() }()
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case err := <-stopped:
			t.Fatalf("Start returned (%v) while admitted work runs", err)
		default:
		}
		_, ok = r.Admit(context.Background())
		assert.False(t, ok, "a stopping ring admits nothing")
		adm.Done()
		adm.Done() // a second call does nothing
		require.NoError(t, <-stopped)
		<-wctx.Done()
		wcancel()
		var own coordinationv1.Lease
		require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ringName + "-shard-s1"}, &own))
		assert.Empty(t, ptr.Deref(own.Spec.HolderIdentity, ""), "released once the work was done")
		assert.Equal(t, "def.2", own.Annotations[sharding.ViewAnnotation], "the release keeps the view")
	})
}

// TestClustersOnlyOptions: with Clusters a ring needs no sharded kind;
// without it, an empty Objects is refused as before.
func TestClustersOnlyOptions(t *testing.T) {
	o := options("s1")
	o.Objects = nil
	_, err := sharding.New(newFake(t, nil), o)
	require.ErrorIs(t, err, sharding.ErrInvalidOptions)
	assert.Contains(t, err.Error(), "Objects must name at least one sharded kind")
	o.Clusters = true
	_, err = sharding.New(newFake(t, nil), o)
	assert.NoError(t, err)
}
