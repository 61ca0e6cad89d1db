package sharding_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/interceptor"
)

// TestMembershipSeesAnExpiryWhenItHappens: with a client that watches,
// a renewal is observed when it is stored, and a shard that stopped
// renewing leaves the view LeaseDuration after that renewal, not at the
// next read of the Leases (reads every RetryPeriod would have seen the
// renewal at 6 s and the expiry at 22 s).
func TestMembershipSeesAnExpiryWhenItHappens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFake(t, nil)
		_, ok := c.(client.WithWatch)
		require.True(t, ok, "the fake client watches")
		putLeaseFor(t, c, "b", 0, 15*time.Second)
		r := newRing(t, c, "a")
		stop, _ := startRing(t, r)
		defer func() { require.NoError(t, stop()) }()
		synctest.Wait()
		require.Equal(t, []string{"a", "b"}, r.Shards())

		time.Sleep(5 * time.Second)
		putLeaseFor(t, c, "b", 0, 15*time.Second) // b's last renewal, at 5 s
		time.Sleep(15*time.Second - time.Millisecond)
		synctest.Wait()
		assert.Equal(t, []string{"a", "b"}, r.Shards(), "b's hold runs until 15 s after its last renewal arrived")
		time.Sleep(5 * time.Millisecond)
		synctest.Wait()
		assert.Equal(t, []string{"a"}, r.Shards(), "b is gone as soon as its hold ended")
	})
}

// putSharderLease stores the ring's sharder Lease as held by holder and
// renewed now, for d.
func putSharderLease(t *testing.T, c client.Client, holder string, d time.Duration) {
	t.Helper()
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ringName + "-sharder"}}
	spec := coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(holder),
		LeaseDurationSeconds: ptr.To(int32(d / time.Second)),
		RenewTime:            &metav1.MicroTime{Time: time.Now()},
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(l), l); err == nil {
		l.Spec = spec
		require.NoError(t, c.Update(context.Background(), l))
		return
	}
	l.Spec = spec
	require.NoError(t, c.Create(context.Background(), l))
}

func sharderHolder(t *testing.T, c client.Client) string {
	t.Helper()
	l := &coordinationv1.Lease{}
	require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ringName + "-sharder"}, l))
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

// TestSharderTakenOverWhenItsHoldEnds: the campaign observes the sharder
// Lease's renewals as they are stored (the watch) and tries again the
// moment the observed hold ends, not at its next period (with tries every
// 2 to 2.4 s it saw the renewal at 5 s only at its next try, and took the
// Lease over 21 s or later).
func TestSharderTakenOverWhenItsHoldEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFake(t, nil)
		putSharderLease(t, c, "x", 15*time.Second)
		r := newRing(t, c, "a")
		stop, _ := startRing(t, r)
		defer func() { require.NoError(t, stop()) }()
		synctest.Wait()
		require.Equal(t, "x", sharderHolder(t, c))

		time.Sleep(5 * time.Second)
		putSharderLease(t, c, "x", 15*time.Second) // x's last renewal, at 5 s
		time.Sleep(15*time.Second - time.Millisecond)
		synctest.Wait()
		assert.Equal(t, "x", sharderHolder(t, c), "x's hold runs until 15 s after its last renewal arrived")
		time.Sleep(5 * time.Millisecond)
		synctest.Wait()
		h := sharderHolder(t, c)
		assert.NotEqual(t, "x", h, "taken over as soon as x's hold ended")
		assert.NotEmpty(t, h)
	})
}

// TestSweepRequestsDrainsBeforeMoves: when a shard joined and another is
// gone, the sweep requests every drain before it moves the gone shard's
// objects, so that the acknowledgments do not wait behind the reconciles
// of the moved objects in the live shards' queues. Every drain is counted
// once, and pending once.
func TestSweepRequestsDrainsBeforeMoves(t *testing.T) {
	var (
		mu    sync.Mutex
		kinds []string // "drain" or "move", in the order the patches were sent
	)
	funcs := &interceptor.Funcs{Patch: func(ctx context.Context, c client.Client, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		data, err := patch.Data(obj)
		require.NoError(t, err)
		var p struct {
			Metadata struct {
				Labels map[string]*string `json:"labels"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(data, &p))
		mu.Lock()
		if v := p.Metadata.Labels[drainKey]; v != nil {
			kinds = append(kinds, "drain")
		} else if p.Metadata.Labels[shardKey] != nil {
			kinds = append(kinds, "move")
		}
		mu.Unlock()
		return c.Patch(ctx, obj, patch, opts...)
	}}
	c := newFake(t, funcs, configMaps(300, nil)...)
	putLease(t, c, "a", 0)
	putLease(t, c, "b", 0)
	r := newRing(t, c, "a")
	res, err := r.Sweep(context.Background())
	require.NoError(t, err)
	require.Equal(t, 300, res.Assigned)

	// c joins while b is gone (released).
	putLease(t, c, "c", 0)
	l := &coordinationv1.Lease{}
	require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ringName + "-shard-b"}, l))
	l.Spec.HolderIdentity = ptr.To("")
	require.NoError(t, c.Update(context.Background(), l))
	mu.Lock()
	kinds = nil
	mu.Unlock()
	res, err = r.Sweep(context.Background())
	require.NoError(t, err)
	require.NotZero(t, res.Drains)
	require.NotZero(t, res.Reassigned)
	assert.Equal(t, 300, res.Objects, "each object counted once")
	assert.Equal(t, res.Drains, res.Pending, "each drain pending once")
	mu.Lock()
	defer mu.Unlock()
	lastDrain, firstMove := -1, len(kinds)
	drains := 0
	for i, k := range kinds {
		if k == "drain" {
			lastDrain = i
			drains++
		} else if firstMove == len(kinds) {
			firstMove = i
		}
	}
	assert.Equal(t, res.Drains, drains)
	assert.Less(t, lastDrain, firstMove, "every drain requested before the first move")
	for _, cm := range listCMs(t, c) {
		if cm.Labels[drainKey] != "" {
			assert.Equal(t, "a", cm.Labels[shardKey], "only a's objects drain, towards c")
			assert.Equal(t, "c", want([]string{"a", "c"}, cm.Name))
		}
	}
}
