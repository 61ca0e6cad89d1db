package sharding_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
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

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/interceptor"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding"
	"github.com/kubeloop/kubeloop/sharding/internal/ranges"
)

// gatedFake is the fake client answering the ServerSide probe as an API
// server with the ShardedListAndWatch gate does: an invalid
// shardSelector is refused. (The fake caches nothing, so this tests the
// handshake, not the cache.)
// Each Lease update takes leaseWrite (in the bubble's time).
func gatedFake(t *testing.T, leaseWrite time.Duration) client.Client {
	return newFake(t, &interceptor.Funcs{
		List: func(ctx context.Context, c client.Client, list client.ObjectList, opts ...client.ListOption) error {
			lo := (&client.ListOptions{}).ApplyOptions(opts)
			if lo.Raw != nil && lo.Raw.ShardSelector != "" {
				return apierrors.NewBadRequest("invalid shard selector: hexStart must be a 0x-prefixed 16-digit hex value")
			}
			return c.List(ctx, list, opts...)
		},
		Update: func(ctx context.Context, c client.Client, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := obj.(*coordinationv1.Lease); ok && leaseWrite > 0 {
				time.Sleep(leaseWrite)
			}
			return c.Update(ctx, obj, opts...)
		},
	})
}

// segments parses Ring.Ranges' runs into a set of segment numbers.
func segments(runs string) map[int]bool {
	out := map[int]bool{}
	if runs == "" || runs == "none" {
		return out
	}
	for part := range strings.SplitSeq(runs, ",") {
		from, to, ok := strings.Cut(part, "-")
		if !ok {
			to = from
		}
		a, _ := strconv.Atoi(from)
		z, _ := strconv.Atoi(to)
		for k := a; k <= z; k++ {
			out[k] = true
		}
	}
	return out
}

// TestServerSideHandshake: on the fake, in a synctest bubble, shard a
// holds the whole space and reconciles (for 15 s) an object of what will
// be b's share; b joins and gets its share only after a gave it up (the
// reconcile ended, a's Lease no longer lists it), and the shards never
// admit a segment both at once; when b stops, a takes the whole space
// again.
func TestServerSideHandshake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := gatedFake(t, 0)
		ss := func(o *sharding.Options) { o.Mode, o.Logger = sharding.ServerSide, realLogger() }
		a, b := newRing(t, c, "a", ss), newRing(t, c, "b", ss)
		ctx := context.Background()
		var wg sync.WaitGroup
		actx, stopA := context.WithCancel(ctx)
		wg.Go(func() { assert.NoError(t, a.Start(actx)) })
		time.Sleep(10 * time.Second)
		require.Len(t, segments(a.Ranges()), 127, "a alone holds every segment")

		// leaseLists returns the segments shard's Lease lists.
		leaseLists := func(shard string) ranges.Set {
			var l coordinationv1.Lease
			require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ringName + "-shard-" + shard}, &l))
			set, err := ranges.Parse(l.Annotations[sharding.RangesAnnotation])
			require.NoError(t, err)
			return set
		}

		// A reconcile of an object in b's future share runs on a, until
		// released: a cannot let that segment go before it ends.
		share := ranges.Assign([]string{"a", "b"})["b"]
		var cm *corev1.ConfigMap
		for i := 0; cm == nil || !share.HasHash(ranges.Hash(string(cm.UID))); i++ {
			require.Less(t, i, 1000)
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "work", Name: fmt.Sprintf("slow-%d", i)}}
			require.NoError(t, c.Create(ctx, cm)) // the fake sets a random uid
		}
		seg := ranges.Of(ranges.Hash(string(cm.UID)))
		release := make(chan struct{})
		entered := make(chan struct{})
		gate, err := a.Reconciler(&corev1.ConfigMap{}, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			close(entered)
			<-release
			return reconcile.Result{}, nil
		}))
		require.NoError(t, err)
		wg.Go(func() {
			_, err := gate.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cm)})
			assert.NoError(t, err)
		})
		<-entered
		time.AfterFunc(15*time.Second, func() { close(release) })
		var inflight atomic.Bool
		inflight.Store(true)
		time.AfterFunc(15*time.Second, func() { inflight.Store(false) })

		bctx, stopB := context.WithCancel(ctx)
		wg.Go(func() { assert.NoError(t, b.Start(bctx)) })
		var overlaps, early []int
		for range 300 { // 30 s in steps of 100 ms
			time.Sleep(100 * time.Millisecond)
			sa, sb, listedByA := segments(a.Ranges()), segments(b.Ranges()), leaseLists("a")
			if inflight.Load() && sb[seg] {
				overlaps = append(overlaps, seg) // a still reconciles in it
			}
			for k := range sb {
				if sa[k] {
					overlaps = append(overlaps, k)
				}
				if listedByA.Has(k) {
					early = append(early, k)
				}
			}
		}
		assert.Empty(t, overlaps, "segments admitted by both shards at once")
		assert.Empty(t, early, "segments b admits while a's Lease still lists them")
		assert.Equal(t, 64, leaseLists("a").Len(), "a's Lease lists its share")
		sa, sb := segments(a.Ranges()), segments(b.Ranges())
		assert.Len(t, sa, 64, "a's share of two")
		assert.Len(t, sb, 63, "b's share of two")

		stopB()
		time.Sleep(30 * time.Second)
		assert.Len(t, segments(a.Ranges()), 127, "a holds every segment again")
		stopA()
		wg.Wait()
	})
}

// TestServerSideConcurrentStart: three shards start 0.1 s apart, each
// claiming from its first view of the ring, which does not hold the later
// ones; the claims cross in the Leases, and no segment is ever admitted by
// two shards. They settle on Maglev's shares.
func TestServerSideConcurrentStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Lease writes take 400 ms, so that claims cross: a shard reads
		// the Leases while another's claim is on its way.
		c := gatedFake(t, 400*time.Millisecond)
		ss := func(o *sharding.Options) { o.Mode, o.Logger = sharding.ServerSide, realLogger() }
		names := []string{"a", "b", "c"}
		var rings []*sharding.Ring
		for _, n := range names {
			rings = append(rings, newRing(t, c, n, ss))
		}
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		// b and c start while a's first claim (of everything: its first
		// view holds a alone) is being written, so b's first read of the
		// Leases does not see it: only the read after b's own claim does.
		for i, r := range rings {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 100 * time.Millisecond)
				assert.NoError(t, r.Start(ctx))
			})
		}
		listed := func(shard string) ranges.Set {
			var l coordinationv1.Lease
			if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ringName + "-shard-" + shard}, &l) != nil {
				return ranges.Set{}
			}
			set, _ := ranges.Parse(l.Annotations[sharding.RangesAnnotation])
			return set
		}
		// early: a segment a shard newly admits although another shard's
		// Lease listed it at the previous look and still does (a start
		// without the handshake). A claim that another shard makes after
		// the start is the handshake at work, and is not counted.
		var overlaps, early []string
		prevAdmitted := map[string]map[int]bool{}
		prevListed := map[string]ranges.Set{}
		for range 400 { // 40 s in steps of 100 ms
			time.Sleep(100 * time.Millisecond)
			owner := map[int]string{}
			nowListed := map[string]ranges.Set{}
			for _, n := range names {
				nowListed[n] = listed(n)
			}
			for _, r := range rings {
				adm := segments(r.Ranges())
				for k := range adm {
					if o, ok := owner[k]; ok {
						overlaps = append(overlaps, fmt.Sprintf("%d by %s and %s", k, o, r.Shard()))
					}
					owner[k] = r.Shard()
					if prevAdmitted[r.Shard()][k] {
						continue
					}
					for _, other := range names {
						if other != r.Shard() && prevListed[other].Has(k) && nowListed[other].Has(k) {
							early = append(early, fmt.Sprintf("%d admitted by %s while %s's Lease lists it", k, r.Shard(), other))
						}
					}
				}
				prevAdmitted[r.Shard()] = adm
			}
			prevListed = nowListed
		}
		assert.Empty(t, overlaps)
		assert.Empty(t, early)
		want := ranges.Assign(names)
		for _, r := range rings {
			assert.Len(t, segments(r.Ranges()), want[r.Shard()].Len(), r.Shard())
		}
		stop()
		wg.Wait()
	})
}
