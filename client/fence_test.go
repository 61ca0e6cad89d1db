package client_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/lease"
)

// deadlineFence is a hold that ends at a time on the (bubble's) clock.
type deadlineFence struct {
	name string
	end  time.Time
}

func (f deadlineFence) Remaining() (time.Duration, error) {
	if left := time.Until(f.end); left > 0 {
		return left, nil
	}
	return 0, fmt.Errorf("lease %s: %w", f.name, client.ErrLeaseLost)
}

func TestFenceFromAndComposition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		assert.Nil(t, client.FenceFrom(ctx), "no fence")
		assert.Equal(t, ctx, client.WithFence(ctx, nil), "a nil fence changes nothing")

		outer := client.WithFence(ctx, deadlineFence{name: "ops/leader", end: time.Now().Add(3 * time.Second)})
		inner := client.WithFence(outer, deadlineFence{name: "ops/shard-a", end: time.Now().Add(time.Second)})
		left, err := client.FenceFrom(inner).Remaining()
		require.NoError(t, err)
		assert.Equal(t, time.Second, left, "the shortest hold bounds")
		left, err = client.FenceFrom(outer).Remaining()
		require.NoError(t, err)
		assert.Equal(t, 3*time.Second, left, "the outer context keeps its own fence only")

		time.Sleep(time.Second)
		_, err = client.FenceFrom(inner).Remaining()
		require.ErrorIs(t, err, client.ErrLeaseLost)
		assert.Contains(t, err.Error(), "ops/shard-a", "the fence that refused is named")
		_, err = client.FenceFrom(outer).Remaining()
		require.NoError(t, err, "the outer hold is still valid")

		time.Sleep(2 * time.Second)
		_, err = client.FenceFrom(outer).Remaining()
		require.ErrorIs(t, err, client.ErrLeaseLost)
	})
}

func TestFenceWrite(t *testing.T) {
	plainErr := errors.New("boom")
	tests := []struct {
		name  string
		fence client.Fence
		// sleep passes before the write's result (its request) comes back.
		sleep   time.Duration
		result  error
		wantErr error  // errors.Is target; nil: no error
		wantMsg string // substring of the error
		bounded bool   // the request's context has a deadline
	}{
		{name: "no fence", result: nil},
		{name: "no fence, an error passes unchanged", result: plainErr, wantErr: plainErr, wantMsg: "boom"},
		{name: "refused", fence: client.FenceFunc(func() (time.Duration, error) {
			return 0, fmt.Errorf("lease ops/x: %w", client.ErrLeaseLost)
		}), wantErr: client.ErrLeaseLost, wantMsg: "fenced: lease ops/x: lease lost"},
		{name: "a refusal not wrapping ErrLeaseLost is wrapped", fence: client.FenceFunc(func() (time.Duration, error) {
			return 0, plainErr
		}), wantErr: client.ErrLeaseLost, wantMsg: "fenced: lease lost: boom"},
		{name: "no time left counts as refused", fence: client.FenceFunc(func() (time.Duration, error) { return 0, nil }),
			wantErr: client.ErrLeaseLost},
		{name: "admitted: bounded by the hold", fence: deadlineFence{name: "ops/x", end: time.Now().Add(time.Hour)},
			bounded: true},
		{name: "admitted, the request fails on its own", fence: deadlineFence{name: "ops/x", end: time.Now().Add(time.Hour)},
			result: plainErr, wantErr: plainErr, bounded: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				if tt.fence != nil {
					if f, ok := tt.fence.(deadlineFence); ok {
						f.end = time.Now().Add(time.Hour) // on the bubble's clock
						tt.fence = f
					}
					ctx = client.WithFence(ctx, tt.fence)
				}
				rctx, done, err := client.FenceWrite(ctx)
				if err == nil {
					_, has := rctx.Deadline()
					assert.Equal(t, tt.bounded, has)
					if tt.fence == nil {
						assert.Equal(t, ctx, rctx, "no fence: the write's context is the caller's")
					}
					err = done(tt.result)
				}
				if tt.wantErr == nil {
					require.NoError(t, err)
					return
				}
				require.ErrorIs(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), tt.wantMsg)
				if tt.result == plainErr {
					assert.NotErrorIs(t, err, client.ErrLeaseLost, "a failure of the request itself is not a lost lease")
				}
			})
		})
	}
}

// TestFenceBoundsTheRequest: a request still on its way when the hold
// ends is cancelled at once, and its error wraps ErrLeaseLost.
func TestFenceBoundsTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := deadlineFence{name: "ops/shard-a", end: start.Add(1500 * time.Millisecond)}
		rctx, done, err := client.FenceWrite(client.WithFence(context.Background(), f))
		require.NoError(t, err)
		<-rctx.Done() // a request that never gets an answer
		assert.Equal(t, 1500*time.Millisecond, time.Since(start), "cancelled when the hold ends, not later")
		err = done(fmt.Errorf("Put \"https://...\": %w", rctx.Err()))
		require.ErrorIs(t, err, client.ErrLeaseLost)
		require.ErrorIs(t, err, context.DeadlineExceeded, "the request's own error stays reachable")
		assert.Contains(t, err.Error(), "lease ops/shard-a: lease lost")
		assert.Contains(t, err.Error(), "the hold ended while the request was on its way")
	})
}

// TestFenceHolder: a lease.Holder is a Fence (the sharding ring and the
// elector put theirs into contexts), and the sentinels are one.
func TestFenceHolder(t *testing.T) {
	var _ client.Fence = (*lease.Holder)(nil)
	assert.Same(t, lease.ErrLost, client.ErrLeaseLost)
}

// A leader-only runnable's context carries its election's fence: a write
// asks it just before its request is sent.
func ExampleWithFence() {
	held := true
	fence := client.FenceFunc(func() (time.Duration, error) {
		if !held {
			return 0, fmt.Errorf("lease ops/my-operator: %w", client.ErrLeaseLost)
		}
		return 10 * time.Second, nil
	})
	ctx := client.WithFence(context.Background(), fence)

	left, err := client.FenceFrom(ctx).Remaining()
	fmt.Println(left, err)
	held = false
	_, err = client.FenceFrom(ctx).Remaining()
	fmt.Println(errors.Is(err, client.ErrLeaseLost), err)
	fmt.Println(client.FenceFrom(context.Background()) == nil)
	// Output:
	// 10s <nil>
	// true lease ops/my-operator: lease lost
	// true
}

// BenchmarkFenceWrite is the check every live write makes before it is
// sent: without a fence in the context, and with one (which also bounds
// the request's context).
func BenchmarkFenceWrite(b *testing.B) {
	type key struct{}
	base := context.WithValue(context.Background(), key{}, "a value, as a reconcile's context carries some")
	fence := client.FenceFunc(func() (time.Duration, error) { return time.Minute, nil })
	for _, bc := range []struct {
		name string
		ctx  context.Context
	}{{"no fence", base}, {"fenced", client.WithFence(base, fence)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, done, err := client.FenceWrite(bc.ctx)
				if err != nil {
					b.Fatal(err)
				}
				_ = done(nil)
			}
		})
	}
}
