package sharding_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/interceptor"
	"github.com/kubeloop/kubeloop/sharding"
)

// TestFractionalLeaseDuration is issue 29's case: LeaseDuration 1.9s and
// RenewDeadline 1.5s. The shard Lease stores 2s (not 1s), and a second
// instance of the shard takes the Lease over only after the first one
// stopped admitting reconciles (its readiness check failed), measured
// from the first instance's last renewal.
func TestFractionalLeaseDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cutOff atomic.Bool // the first instance's Lease writes fail
		var firstHolder atomic.Pointer[string]
		c := newFake(t, &interceptor.Funcs{Update: func(ctx context.Context, cl client.Client, obj client.Object, opts ...client.UpdateOption) error {
			if l, ok := obj.(*coordinationv1.Lease); ok && cutOff.Load() && ptr.Deref(l.Spec.HolderIdentity, "") == *firstHolder.Load() {
				return errors.New("connection refused")
			}
			return cl.Update(ctx, obj, opts...)
		}})
		fast := func(o *sharding.Options) {
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 1900*time.Millisecond, 1500*time.Millisecond, 200*time.Millisecond
		}
		first := newRing(t, c, "a", fast, func(o *sharding.Options) { o.ExitOnLeaseLoss = true })
		_, firstDone := startRing(t, first)
		synctest.Wait()
		require.NoError(t, first.Checker(nil))
		l := shardLease(t, c, "a")
		assert.EqualValues(t, 2, ptr.Deref(l.Spec.LeaseDurationSeconds, 0), "1.9s is stored as 2s")
		firstHolder.Store(l.Spec.HolderIdentity)

		second := newRing(t, c, "a", fast)
		stopSecond, _ := startRing(t, second)
		time.Sleep(time.Second) // the second instance watches renewals
		require.Error(t, second.Checker(nil), "the Lease is renewed: no takeover")

		cutOff.Store(true)
		cut := time.Now()
		var lastValid, acquired time.Time
		for acquired.IsZero() {
			if first.Checker(nil) == nil {
				lastValid = time.Now()
			}
			if second.Checker(nil) == nil {
				acquired = time.Now()
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("first valid until %s after the cut, second acquired %s after that", lastValid.Sub(cut), acquired.Sub(lastValid))
		assert.True(t, lastValid.Before(acquired), "two instances of the shard admitted reconciles at once")
		assert.GreaterOrEqual(t, acquired.Sub(lastValid), 2*time.Second-1500*time.Millisecond-10*time.Millisecond, "the margin is at least stored duration - RenewDeadline")
		require.ErrorIs(t, <-firstDone, sharding.ErrLeaseLost)
		require.NoError(t, stopSecond())
	})
}
