package sharding_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding"
)

// write is one write of the object as the witness saw it.
type write struct {
	rv string
	by string // the writer's annotation
	at time.Time
}

// witness watches one object and records every change's resourceVersion
// and writer (the annotation "by").
type witness struct {
	mu     sync.Mutex
	writes []write
	stop   func()
	done   chan struct{}
}

func watchObject(t *testing.T, ns, name string) *witness {
	t.Helper()
	c, err := client.NewWithWatch(restConfig, client.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := c.Watch(ctx, &corev1.PodTemplateList{}, client.InNamespace(ns))
	require.NoError(t, err)
	wt := &witness{stop: func() { cancel(); w.Stop() }, done: make(chan struct{})}
	go func() {
		defer close(wt.done)
		for ev := range w.ResultChan() {
			pt, ok := ev.Object.(*corev1.PodTemplate)
			if !ok || pt.Name != name || (ev.Type != watch.Added && ev.Type != watch.Modified) {
				continue
			}
			wt.mu.Lock()
			wt.writes = append(wt.writes, write{rv: pt.ResourceVersion, by: pt.Annotations["by"], at: time.Now()})
			wt.mu.Unlock()
		}
	}()
	return wt
}

func (w *witness) snapshot() []write {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]write(nil), w.writes...)
}

func (w *witness) close() []write {
	w.stop()
	<-w.done
	return w.snapshot()
}

// mark is a merge patch that sets the annotation by (no resourceVersion
// precondition: without the fence it would land whatever happened since).
func mark(by string) client.Patch {
	return client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"annotations":{"by":%q}}}`, by))
}

// TestStoppedProcessCannotWriteAfterTakeover is issue 29's stopped
// process: shard a's reconcile of an object is frozen mid-flight (blocked
// on a channel here; its process's connection is cut, so a's Lease is not
// renewed) while a's Lease lapses and shard b, another Ring, takes the
// object over and reconciles it. The connection is restored, then the
// frozen reconcile resumes and writes: its update and its patch (one
// without any precondition, which would land) fail with ErrLeaseLost, and
// the witness, a watch on the object, shows no write by a after b's.
// Control: the same patch from a's client outside the gate lands.
func TestStoppedProcessCannotWriteAfterTakeover(t *testing.T) {
	ctx := context.Background()
	admin, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ns := newTestNamespace(t, admin)
	require.NoError(t, admin.Create(ctx, podTemplate(ns, "obj")))
	ringName := unique("stopped")
	sa, sb := unique("a"), unique("b")
	wt := watchObject(t, ns, "obj")

	frozen, unfreeze := make(chan struct{}), make(chan struct{})
	type result struct{ update, patch, detached error }
	resumed := make(chan result, 1)
	var a *replica
	innerA := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		var pt corev1.PodTemplate
		if err := a.live.Get(ctx, req.NamespacedName, &pt); err != nil {
			return reconcile.Result{}, err
		}
		if err := a.live.Patch(ctx, &pt, mark(sa)); err != nil {
			return reconcile.Result{}, err
		}
		close(frozen)
		<-unfreeze // stopped here while b takes over
		var res result
		pt.Annotations["by"] = sa + "-update"
		res.update = a.live.Update(ctx, &pt)
		res.patch = a.live.Patch(ctx, &corev1.PodTemplate{ObjectMeta: pt.ObjectMeta}, mark(sa+"-patch"))
		res.detached = a.live.Patch(context.WithoutCancel(ctx), &corev1.PodTemplate{ObjectMeta: pt.ObjectMeta}, mark(sa+"-detached"))
		resumed <- res
		return reconcile.Result{}, nil
	})
	a = newReplica(t, ringName, ns, sa, innerA)
	require.Eventually(t, func() bool {
		var pt corev1.PodTemplate
		return admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "obj"}, &pt) == nil && pt.Labels[sharding.ShardLabel(ringName)] == sa &&
			a.cache.Get(ctx, types.NamespacedName{Namespace: ns, Name: "obj"}, &corev1.PodTemplate{}) == nil
	}, 30*time.Second, 20*time.Millisecond, "a's sharder assigns the object to a")
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "obj"}}
	go func() {
		for {
			res, err := a.gate.Reconcile(ctx, req)
			if err != nil || res.RequeueAfter == 0 {
				return
			}
			time.Sleep(res.RequeueAfter)
		}
	}()
	<-frozen

	a.proxy.Blackhole(true) // the process stops: nothing of a reaches the API server
	cut := time.Now()
	b := newReplica(t, ringName, ns, sb, reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		var pt corev1.PodTemplate
		if err := admin.Get(ctx, req.NamespacedName, &pt); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		return reconcile.Result{}, admin.Patch(ctx, &pt, mark(sb))
	}))
	b.runController(t)
	var tookOver time.Time
	require.Eventually(t, func() bool {
		for _, w := range wt.snapshot() {
			if w.by == sb {
				tookOver = w.at
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond, "b takes the object over and reconciles it")
	t.Logf("b reconciled the object %s after a's process stopped (LeaseDuration %s)", tookOver.Sub(cut).Round(time.Millisecond), realLease)

	a.proxy.Blackhole(false) // the process resumes: its connection works again
	close(unfreeze)
	var res result
	select {
	case res = <-resumed:
	case <-time.After(30 * time.Second):
		t.Fatal("the frozen reconcile did not resume")
	}
	for name, err := range map[string]error{"update": res.update, "patch": res.patch, "detached patch": res.detached} {
		require.ErrorIs(t, err, client.ErrLeaseLost, "%s", name)
		require.ErrorIs(t, err, sharding.ErrLeaseLost, "%s", name)
		assert.Contains(t, err.Error(), "PodTemplate "+ns+"/obj", "%s names the object", name)
		assert.Contains(t, err.Error(), ringName+"-shard-"+sa, "%s names the shard's Lease", name)
	}
	time.Sleep(time.Second) // any write that went out would be seen by now
	seen := wt.snapshot()

	// Control: a's client itself works; only the fence stopped the writes.
	var pt corev1.PodTemplate
	require.NoError(t, admin.Get(ctx, req.NamespacedName, &pt))
	require.NoError(t, a.live.Patch(ctx, &pt, mark(sa+"-control")))
	require.Eventually(t, func() bool {
		for _, w := range wt.snapshot()[len(seen):] {
			if w.by == sa+"-control" {
				return true
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "the control write lands and the witness sees it")

	after := false
	for _, w := range seen {
		if w.by == sb {
			after = true
			continue
		}
		if after {
			assert.NotContains(t, w.by, sa, "a write by the old shard landed after the takeover: rv %s", w.rv)
		}
	}
	t.Logf("witness: %d writes before the control; the frozen reconcile's 3 writes were refused", len(seen))
	wt.close()
	require.NoError(t, b.stop())
	err = a.stop()
	assert.NoError(t, err, "a rejoined rather than exiting")
}
