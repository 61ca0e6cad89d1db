package sharded_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/examples/sharded"
	"github.com/kubeloop/kubeloop/sharding"
)

const (
	// killNS holds this test's objects and its ring's Leases, apart from
	// TestShardedReplicas's.
	killNS      = "sharder-kill"
	killObjects = 1000
	// The replicas' timing (RunReplica): retry period 1/5 of the lease
	// duration; the sharder's drain check interval is the default.
	killRetry      = leaseDur / 5
	killDrainCheck = sharding.DefaultDrainCheck
)

// TestSharderKilledMidMove kills -9 the replica that runs the sharder
// while the drains of a scale-out 3 -> 4 are under way: a survivor takes
// the sharder over, every object ends up assigned to a live shard (none
// unassigned, none draining, none on the killed shard) within the lease
// duration plus a bounded time, every object reaches its desired state,
// and no object is reconciled by two processes at once.
func TestSharderKilledMidMove(t *testing.T) {
	ctx := context.Background()
	drainKey := sharding.DrainLabel(sharded.Ring)
	// The objects of TestShardedReplicas would be swept into this ring:
	// the ring shards ConfigMaps in every namespace.
	require.NoError(t, c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(testNS)))
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: killNS}}))
	t.Cleanup(func() {
		// After the replicas' cleanups (LIFO): leave nothing for another
		// test's ring to sweep.
		assert.NoError(t, c.DeleteAllOf(context.Background(), &corev1.ConfigMap{}, client.InNamespace(killNS)))
	})

	all := []string{"ka", "kb", "kc", "kd"}
	reps := map[string]*replica{}
	start := func(shard string) *replica {
		r := startReplica(t, shard, "-lease-namespace", killNS)
		reps[shard] = r
		return r
	}
	for _, s := range all[:3] {
		start(s)
	}
	// holders maps the holder identities of the ring's shard Leases to
	// their shards.
	holders := func() (map[string]string, error) {
		var l coordinationv1.LeaseList
		if err := c.List(ctx, &l, client.InNamespace(killNS), client.MatchingLabels{sharding.RingLabel: sharded.Ring}); err != nil {
			return nil, err
		}
		out := map[string]string{}
		for _, ls := range l.Items {
			if h := ptr.Deref(ls.Spec.HolderIdentity, ""); h != "" {
				out[h] = ls.Labels[sharding.ShardNameLabel]
			}
		}
		return out, nil
	}
	// sharder returns the holder identity of the sharder Lease ("": none)
	// and the shard whose replica it is (the shard Lease with the same
	// holder; "": none).
	sharderKey := client.ObjectKey{Namespace: killNS, Name: sharded.Ring + "-sharder"}
	sharder := func() (holder, shard string, err error) {
		l := &coordinationv1.Lease{}
		if err := c.Get(ctx, sharderKey, l); err != nil {
			return "", "", client.IgnoreNotFound(err)
		}
		hs, err := holders()
		h := ptr.Deref(l.Spec.HolderIdentity, "")
		return h, hs[h], err
	}
	require.Eventually(t, func() bool {
		hs, err := holders()
		_, s, err2 := sharder()
		return err == nil && err2 == nil && len(hs) == 3 && s != ""
	}, 30*time.Second, 100*time.Millisecond, "three shards and a sharder")
	time.Sleep(2 * time.Second) // the views and the webhook configuration

	names := make([]string, killObjects)
	{
		var wg sync.WaitGroup
		ch := make(chan int)
		for range 16 {
			wg.Go(func() {
				for i := range ch {
					assert.NoError(t, c.Create(ctx, &corev1.ConfigMap{
						ObjectMeta: metav1.ObjectMeta{Namespace: killNS, Name: names[i]},
						Data:       map[string]string{"desired": "v1"}}))
				}
			})
		}
		for i := range names {
			names[i] = fmt.Sprintf("cm-%04d", i)
			ch <- i
		}
		close(ch)
		wg.Wait()
	}
	_, took := waitConvergedIn(t, killNS, killObjects, all[:3], 90*time.Second)
	t.Logf("3 replicas: %d objects assigned and reconciled %s after the last create", killObjects, took.Round(time.Millisecond))

	// Scale out: the sharder starts the drains towards kd. Kill it as
	// soon as the first object carries the drain label.
	victimHolder, victim, err := sharder()
	require.NoError(t, err)
	require.NotEmpty(t, victim)
	start("kd")
	scaled := time.Now()
	draining := func() []metav1.PartialObjectMetadata {
		var l metav1.PartialObjectMetadataList
		l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
		require.NoError(t, c.List(ctx, &l, client.InNamespace(killNS), client.HasLabels{drainKey}))
		return l.Items
	}
	seen := 0
	for seen == 0 {
		require.Less(t, time.Since(scaled), 30*time.Second, "no drain began after kd joined")
		time.Sleep(10 * time.Millisecond)
		seen = len(draining())
	}
	v := reps[victim]
	// The killed sharder's last renewal is this one or a later one: no
	// one may acquire its Lease before renewed + leaseDur.
	before := &coordinationv1.Lease{}
	require.NoError(t, c.Get(ctx, sharderKey, before))
	require.Equal(t, victimHolder, ptr.Deref(before.Spec.HolderIdentity, ""))
	renewed := before.Spec.RenewTime.Time
	require.NoError(t, v.cmd.Process.Signal(syscall.SIGKILL))
	v.killed = time.Now()
	<-v.done
	atKill := map[string]int{}
	drained := 0
	for _, cm := range listIn(t, killNS) {
		atKill[cm.Labels[shardKey]]++
		if cm.Labels[drainKey] != "" {
			drained++
		}
	}
	t.Logf("kill -9 of the sharder %s (holder %s) %s after kd started, %d objects draining when seen, %d after the kill; by shard %v",
		victim, victimHolder, v.killed.Sub(scaled).Round(time.Millisecond), seen, drained, atKill)
	var survivors []string
	for _, s := range all {
		if s != victim {
			survivors = append(survivors, s)
		}
	}

	// Every object changes while no sharder runs: the new owners of the
	// killed shard's objects must reconcile them.
	setDesiredIn(t, killNS, names, "v2")

	// A survivor is elected sharder, not before the killed one's Lease
	// expired.
	var next string
	for {
		h, s, err := sharder()
		require.NoError(t, err)
		if h != "" && h != victimHolder {
			next = s
			break
		}
		require.Less(t, time.Since(v.killed), leaseDur+20*time.Second, "no new sharder")
		time.Sleep(20 * time.Millisecond)
	}
	assert.Contains(t, survivors, next, "the new sharder is a live shard")
	after := &coordinationv1.Lease{}
	require.NoError(t, c.Get(ctx, sharderKey, after))
	acquired := after.Spec.AcquireTime.Time
	assert.False(t, acquired.Before(renewed.Add(leaseDur)),
		"the sharder Lease was acquired at %s, before the killed holder's renewal at %s had expired", acquired, renewed)
	elected := acquired.Sub(v.killed) // the same clock: one machine
	t.Logf("sharder %s elected %s after the kill, %s after the killed sharder's last renewal we saw (lease duration %s)",
		next, elected.Round(time.Millisecond), acquired.Sub(renewed).Round(time.Millisecond), leaseDur)

	// Every object is assigned to a live shard, none draining, each where
	// the ring over the survivors puts it. The bound: the Leases expire
	// within leaseDur of the kill, a survivor acquires the sharder Lease
	// within a retry period, and its first sweep starts at once; then
	// come the sweep itself (about 470 patches: the killed shard's objects
	// reassigned, the drains requested; 1.5 to 2.5 s here under -race on 2
	// shared cores) and the acknowledgements, each old shard's behind the
	// reconciles of the objects it just received, one worker per replica,
	// while the sharder sweeps again every drain check period (2 to 6 s
	// more, measured). 15 drain check periods leave room for a loaded
	// machine.
	bound := leaseDur + killRetry + 15*killDrainCheck
	ring := sharding.NewHashRing(survivors, 0)
	var placed time.Duration
	for {
		items := listIn(t, killNS)
		placed = time.Since(v.killed)
		wrong := map[string]int{}
		for _, cm := range items {
			s := cm.Labels[shardKey]
			switch {
			case s == "":
				wrong["unassigned"]++
			case cm.Labels[drainKey] != "":
				wrong["draining"]++
			case s == victim:
				wrong["on the killed shard"]++
			case s != ring.Shard(sharding.Key(cmGK, &cm)):
				wrong["elsewhere than the ring puts it"]++
			}
		}
		if len(items) == killObjects && len(wrong) == 0 {
			break
		}
		if placed > bound+30*time.Second {
			t.Fatalf("%d objects, not all placed on the survivors %s after the kill: %v", len(items), placed, wrong)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("every object assigned to a live shard (none unassigned, draining or on %s) %s after the kill, %s after the new sharder (bound %s)",
		victim, placed.Round(time.Millisecond), (placed - elected).Round(time.Millisecond), bound)
	assert.Less(t, placed, bound, "placed within lease duration + retry period + 15 drain checks")

	by, _ := waitConvergedIn(t, killNS, killObjects, survivors, 60*time.Second)
	reconciled := time.Since(v.killed)
	t.Logf("every object reconciled to v2 by its shard %s after the kill; per shard %v", reconciled.Round(time.Millisecond), perShardOf(by))
	for _, s := range survivors {
		assert.Equal(t, perShardOf(by)[s], reps[s].cachedIn(t, killNS), "replica %s caches only its share", s)
	}

	var rs []*replica
	for _, s := range all {
		rs = append(rs, reps[s])
	}
	n := checkWitness(t, rs)
	t.Logf("witness: %d reconciles in 4 processes, no overlap", n)
	for _, s := range survivors {
		require.NoError(t, reps[s].cmd.Process.Signal(syscall.SIGTERM))
		assert.NoError(t, <-reps[s].done)
	}
}
