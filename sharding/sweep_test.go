package sharding_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/interceptor"
	"github.com/kubeloop/kubeloop/sharding"
)

// ackAll removes the shard and drain labels of every draining object, as
// the old shards' gates do.
func ackAll(t *testing.T, c client.Client) int {
	t.Helper()
	n := 0
	for _, cm := range listCMs(t, c) {
		if cm.Labels[drainKey] == "" {
			continue
		}
		delete(cm.Labels, drainKey)
		delete(cm.Labels, shardKey)
		require.NoError(t, c.Update(context.Background(), &cm))
		n++
	}
	return n
}

func TestSweepAssignsThenDrainsOnJoin(t *testing.T) {
	c := newFake(t, nil, configMaps(300, nil)...)
	for _, s := range []string{"a", "b", "c"} {
		putLease(t, c, s, 0)
	}
	r := newRing(t, c, "a")
	ctx := context.Background()

	res, err := r.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, 300, res.Objects)
	assert.Equal(t, 300, res.Assigned)
	assert.Zero(t, res.Drains)
	three := []string{"a", "b", "c"}
	for _, cm := range listCMs(t, c) {
		require.Equal(t, want(three, cm.Name), cm.Labels[shardKey], cm.Name)
	}
	assert.Equal(t, 300, res.PerShard["a"]+res.PerShard["b"]+res.PerShard["c"])

	// A second sweep changes nothing.
	res, err = r.Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, res.Assigned+res.Drains+res.Reassigned+res.Pending)

	// d joins: the objects that d's points take are drained, the others
	// stay; nothing is moved before its shard acknowledged.
	putLease(t, c, "d", 0)
	four := []string{"a", "b", "c", "d"}
	expectMoves := 0
	for _, cm := range listCMs(t, c) {
		if want(four, cm.Name) != cm.Labels[shardKey] {
			expectMoves++
		}
	}
	res, err = r.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, expectMoves, res.Drains)
	assert.InDelta(t, 75, res.Drains, 35, "about a quarter moves")
	for _, cm := range listCMs(t, c) {
		draining := cm.Labels[drainKey] != ""
		assert.Equal(t, want(four, cm.Name) != want(three, cm.Name), draining, cm.Name)
		assert.Equal(t, want(three, cm.Name), cm.Labels[shardKey], "a draining object keeps its shard until it is acknowledged")
	}

	// Until acknowledged, sweeps only wait.
	res, err = r.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, expectMoves, res.Pending)
	assert.Zero(t, res.Drains+res.Assigned)

	// Acknowledged (labels gone, the webhook missed the update): the
	// sweep assigns them to d.
	require.Equal(t, expectMoves, ackAll(t, c))
	res, err = r.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, expectMoves, res.Assigned)
	for _, cm := range listCMs(t, c) {
		require.Equal(t, want(four, cm.Name), cm.Labels[shardKey], cm.Name)
		require.Empty(t, cm.Labels[drainKey])
	}
}

func TestSweepReassignsAtOnceFromGoneShards(t *testing.T) {
	tests := []struct {
		name string
		gone func(t *testing.T, c client.Client)
	}{
		{"lease not renewed for its duration", func(t *testing.T, c client.Client) {
			// By the sweeping replica's clock, from when it last saw each
			// Lease change: a and c renew, b does not.
			time.Sleep(testLease)
			putLease(t, c, "a", 0)
			putLease(t, c, "c", 0)
		}},
		{"lease released", func(t *testing.T, c client.Client) {
			l := &coordinationv1.Lease{}
			require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ringName + "-shard-b"}, l))
			l.Spec.HolderIdentity = ptr.To("")
			require.NoError(t, c.Update(context.Background(), l))
		}},
		{"lease deleted", func(t *testing.T, c client.Client) {
			require.NoError(t, c.Delete(context.Background(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ringName + "-shard-b"}}))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { synctest.Test(t, func(t *testing.T) { sweepGone(t, tt.gone) }) })
	}
}

// sweepGone makes shard b gone with gone: one sweep reassigns its
// objects at once and deletes its Lease.
func sweepGone(t *testing.T, gone func(t *testing.T, c client.Client)) {
	c := newFake(t, nil, configMaps(200, nil)...)
	for _, s := range []string{"a", "b", "c"} {
		putLease(t, c, s, 0)
	}
	r := newRing(t, c, "a")
	_, err := r.Sweep(context.Background())
	require.NoError(t, err)
	onB := 0
	for _, cm := range listCMs(t, c) {
		if cm.Labels[shardKey] == "b" {
			onB++
		}
	}
	require.NotZero(t, onB)

	gone(t, c)
	res, err := r.Sweep(context.Background())
	require.NoError(t, err)
	assert.Equal(t, onB, res.Reassigned)
	assert.Zero(t, res.Drains, "objects of live shards stay where they are")
	for _, cm := range listCMs(t, c) {
		require.Equal(t, want([]string{"a", "c"}, cm.Name), cm.Labels[shardKey], cm.Name)
	}
	err = c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ringName + "-shard-b"}, &coordinationv1.Lease{})
	assert.True(t, apierrors.IsNotFound(err), "the gone shard's Lease is deleted after a complete sweep: %v", err)
}

// TestSweepJudgesLeasesByItsOwnClock: the shards' clocks are off by half
// an hour, either way. A shard whose renewTime looks half an hour old but
// keeps renewing is alive; one whose renewTime lies half an hour ahead but
// stopped renewing is gone after its leaseDurationSeconds, by the sweeping
// replica's clock from when it last saw the Lease change.
func TestSweepJudgesLeasesByItsOwnClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFake(t, nil, configMaps(200, nil)...)
		putLease(t, c, "a", 0)
		putLeaseFor(t, c, "behind", 30*time.Minute, 15*time.Second)
		putLeaseFor(t, c, "ahead", -30*time.Minute, 15*time.Second)
		r := newRing(t, c, "a")
		three := []string{"a", "ahead", "behind"}
		res, err := r.Sweep(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 200, res.Assigned)
		for _, cm := range listCMs(t, c) {
			require.Equal(t, want(three, cm.Name), cm.Labels[shardKey], "a renewTime half an hour old is not expired: %s", cm.Name)
		}

		// "behind" renews (its clock still half an hour slow), "ahead" stops.
		for range 7 {
			time.Sleep(2 * time.Second)
			putLeaseFor(t, c, "behind", 30*time.Minute, 15*time.Second)
			putLease(t, c, "a", 0)
			res, err = r.Sweep(context.Background())
			require.NoError(t, err)
			require.Zero(t, res.Reassigned, "14s after its last change, ahead is still alive")
		}
		time.Sleep(time.Second)
		putLeaseFor(t, c, "behind", 30*time.Minute, 15*time.Second)
		putLease(t, c, "a", 0)
		res, err = r.Sweep(context.Background())
		require.NoError(t, err)
		assert.NotZero(t, res.Reassigned, "15s after its last change, ahead is gone, though its renewTime is in the future")
		for _, cm := range listCMs(t, c) {
			require.Equal(t, want([]string{"a", "behind"}, cm.Name), cm.Labels[shardKey], cm.Name)
		}
	})
}

func TestSweepUnknownShardIsLookedUp(t *testing.T) {
	// "z" has no Lease at all: its objects are reassigned. "n" got its
	// Lease after the sweep's view was read: its objects stay.
	objs := append(configMaps(3, map[string]string{shardKey: "z"}), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: "newer", Labels: map[string]string{shardKey: "n"}}})
	var c client.Client
	listed := atomic.Bool{}
	c = newFake(t, &interceptor.Funcs{List: func(ctx context.Context, cl client.Client, list client.ObjectList, opts ...client.ListOption) error {
		err := cl.List(ctx, list, opts...)
		if _, ok := list.(*coordinationv1.LeaseList); ok && listed.CompareAndSwap(false, true) {
			putLease(t, cl, "n", 0) // lands after the view
		}
		return err
	}}, objs...)
	putLease(t, c, "a", 0)
	r := newRing(t, c, "a")
	res, err := r.Sweep(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 3, res.Reassigned)
	got := map[string]string{}
	for _, cm := range listCMs(t, c) {
		got[cm.Name] = cm.Labels[shardKey]
	}
	assert.Equal(t, map[string]string{"cm-0000": "a", "cm-0001": "a", "cm-0002": "a", "newer": "n"}, got)
}

func TestSweepRetriesAConflict(t *testing.T) {
	bumped := atomic.Int32{}
	c := newFake(t, &interceptor.Funcs{Patch: func(ctx context.Context, cl client.Client, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
		if obj.GetName() == "cm-0001" && bumped.Add(1) == 1 {
			// Someone writes between the sweep's list and its patch.
			cm := &corev1.ConfigMap{}
			require.NoError(t, cl.Get(ctx, client.ObjectKeyFromObject(obj), cm))
			cm.Data = map[string]string{"k": "v"}
			require.NoError(t, cl.Update(ctx, cm))
		}
		return cl.Patch(ctx, obj, p, opts...)
	}}, configMaps(3, nil)...)
	putLease(t, c, "a", 0)
	r := newRing(t, c, "a")
	res, err := r.Sweep(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 3, res.Assigned, "the conflicting object is read again and assigned")
	for _, cm := range listCMs(t, c) {
		assert.Equal(t, "a", cm.Labels[shardKey])
	}
	assert.Equal(t, "v", func() string {
		cm := &corev1.ConfigMap{}
		require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "cm-0001"}, cm))
		return cm.Data["k"]
	}(), "the concurrent write is kept")
}

func TestSweepPages(t *testing.T) {
	// Every list of ConfigMaps asks for a page and never for
	// resourceVersion "0", for which kube-apiserver ignores the limit
	// (the fake client would honour it; the real server does not).
	type call struct {
		limit     int64
		rv        string
		continued bool
	}
	var calls []call
	funcs := &interceptor.Funcs{List: func(ctx context.Context, c client.Client, list client.ObjectList, opts ...client.ListOption) error {
		if _, ok := list.(*metav1.PartialObjectMetadataList); ok {
			o := (&client.ListOptions{}).ApplyOptions(opts)
			rv := ""
			if o.Raw != nil {
				rv = o.Raw.ResourceVersion
			}
			calls = append(calls, call{limit: o.Limit, rv: rv, continued: o.Continue != ""})
		}
		return c.List(ctx, list, opts...)
	}}
	c := newFake(t, funcs, configMaps(25, nil)...)
	putLease(t, c, "a", 0)
	r := newRing(t, c, "a", func(o *sharding.Options) { o.SweepPageSize = 4 })
	res, err := r.Sweep(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 25, res.Objects)
	assert.Equal(t, 25, res.Assigned)
	require.Len(t, calls, 7, "25 objects in pages of 4")
	for i, cl := range calls {
		assert.Equal(t, call{limit: 4, continued: i > 0}, cl, "page %d", i)
	}
}

func TestSweepMovesChildrenAfterTheirOwner(t *testing.T) {
	var objs []client.Object
	for i := range 40 {
		p := fmt.Sprintf("p-%02d", i)
		objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: p}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: p + "-child", OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "ConfigMap", Name: p, UID: "u", Controller: ptr.To(true)}}}})
	}
	c := newFake(t, nil, objs...)
	putLease(t, c, "a", 0)
	putLease(t, c, "b", 0)
	r := newRing(t, c, "a", func(o *sharding.Options) { o.Controlled = []client.Object{&corev1.Secret{}} })
	ctx := context.Background()
	_, err := r.Sweep(ctx)
	require.NoError(t, err)
	children := func() map[string]string {
		var l corev1.SecretList
		require.NoError(t, c.List(ctx, &l))
		out := map[string]string{}
		for _, s := range l.Items {
			out[s.OwnerReferences[0].Name] = s.Labels[shardKey]
		}
		return out
	}
	parents := func() map[string]string {
		out := map[string]string{}
		for _, cm := range listCMs(t, c) {
			out[cm.Name] = cm.Labels[shardKey]
		}
		return out
	}
	require.Equal(t, parents(), children(), "children are assigned to their owner's shard")

	putLease(t, c, "c", 0)
	res, err := r.Sweep(ctx)
	require.NoError(t, err)
	require.NotZero(t, res.Drains)
	assert.Equal(t, parents(), children(), "children wait while their owner drains")

	ackAll(t, c)
	_, err = r.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, parents(), children(), "children follow once their owner moved")
	for name, s := range parents() {
		assert.Equal(t, want([]string{"a", "b", "c"}, name), s)
	}
}

func TestSweepWithNoLiveShardDoesNothing(t *testing.T) {
	c := newFake(t, nil, configMaps(3, nil)...)
	r := newRing(t, c, "a")
	res, err := r.Sweep(context.Background())
	require.NoError(t, err)
	assert.Zero(t, res.Assigned)
	for _, cm := range listCMs(t, c) {
		assert.Empty(t, cm.Labels[shardKey], "no shard to assign to: the object waits")
	}
}
