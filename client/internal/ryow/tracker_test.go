package ryow

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestSettleWaitsOnProgress: a read of the client's own write that finds a
// cache reporting its progress behind sleeps until the cache applies its
// next change (next), not for a polling interval: in the synctest bubble
// no time passes between the write's version reaching the cache and the
// read returning caught up, and the cache is read once per change.
func TestSettleWaitsOnProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := New(2 * time.Second)
		k := Key{GK: schema.GroupKind{Kind: "ConfigMap"}, Namespace: "ns", Name: "a"}
		tr.Record(k, Entry{State: Present, RV: 12})

		var version atomic.Uint64
		version.Store(10)
		changed := make(chan struct{})
		var peeks atomic.Int32
		peek := func() (metav1.Object, error) {
			peeks.Add(1)
			cm := &corev1.ConfigMap{}
			cm.ResourceVersion = "10"
			if version.Load() >= 12 {
				cm.ResourceVersion = "12"
			}
			return cm, nil
		}
		progress := func() (uint64, bool) { return version.Load(), true }
		next := func(ctx context.Context, rv uint64) bool {
			select {
			case <-changed:
				return version.Load() >= rv
			case <-ctx.Done():
				return false
			}
		}

		start := time.Now()
		result := make(chan bool, 1)
		go func() {
			ok, err := tr.Settle(t.Context(), k, peek, progress, next)
			assert.NoError(t, err)
			result <- ok
		}()
		synctest.Wait()
		require.Equal(t, int32(1), peeks.Load(), "read once, then waits")
		version.Store(12)
		close(changed)
		synctest.Wait()
		require.True(t, <-result)
		assert.Equal(t, int32(2), peeks.Load())
		assert.Zero(t, time.Since(start), "no polling interval waited")
	})
}

// TestSettleGivesUpAfterTimeout: a cache that never catches up is waited
// for the tracker's timeout, then the caller reads from the server.
func TestSettleGivesUpAfterTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := New(2 * time.Second)
		k := Key{GK: schema.GroupKind{Kind: "ConfigMap"}, Namespace: "ns", Name: "a"}
		tr.Record(k, Entry{State: Present, RV: 12})
		peek := func() (metav1.Object, error) {
			cm := &corev1.ConfigMap{}
			cm.ResourceVersion = "10"
			return cm, nil
		}
		progress := func() (uint64, bool) { return 10, true }
		next := func(ctx context.Context, _ uint64) bool { <-ctx.Done(); return false }
		start := time.Now()
		ok, err := tr.Settle(t.Context(), k, peek, progress, next)
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Equal(t, 2*time.Second, time.Since(start))
	})
}
