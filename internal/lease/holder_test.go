package lease_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/internal/lease"
)

func newHolder(t *testing.T, api lease.API, identity string, clock lease.Clock, d, renew time.Duration) *lease.Holder {
	t.Helper()
	h, err := lease.NewHolder(lease.Config{
		API: api, Namespace: "ns", Name: "l", Identity: identity,
		Labels:        map[string]string{"app": "x"},
		LeaseDuration: d, RenewDeadline: renew, RetryPeriod: renew / 5, Clock: clock,
	})
	require.NoError(t, err)
	return h
}

func TestNewHolderRejects(t *testing.T) {
	_, err := lease.NewHolder(lease.Config{LeaseDuration: time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: time.Second})
	require.Error(t, err)
	for _, w := range []string{"API is nil", "name and namespace are required", "Identity is required", "LeaseDuration 1s must be greater than RenewDeadline 2s"} {
		assert.Contains(t, err.Error(), w)
	}
}

func TestAcquireRenewTakeOverRelease(t *testing.T) {
	w := newWorld()
	api := newMemAPI(w)
	a := newHolder(t, api, "a", skewed{w: w, off: time.Hour}, 1900*time.Millisecond, 1500*time.Millisecond)
	b := newHolder(t, api, "b", skewed{w: w, off: -time.Hour}, 1900*time.Millisecond, 1500*time.Millisecond)
	ctx := t.Context()

	require.NoError(t, a.TryAcquireOrRenew(ctx), "creates the Lease")
	l := api.stored("ns", "l")
	assert.Equal(t, "a", ptr.Deref(l.Spec.HolderIdentity, ""))
	assert.EqualValues(t, 2, ptr.Deref(l.Spec.LeaseDurationSeconds, 0), "1.9s written as 2s")
	assert.EqualValues(t, 0, ptr.Deref(l.Spec.LeaseTransitions, -1))
	assert.Equal(t, "x", l.Labels["app"])
	assert.True(t, a.Valid(a.Clock().Now()))

	err := b.TryAcquireOrRenew(ctx)
	require.ErrorIs(t, err, lease.ErrHeld)
	assert.Equal(t, `lease ns/l: lease: held by another holder "a" for another 2s`, err.Error())
	assert.False(t, b.Valid(b.Clock().Now()))

	w.advance(time.Second)
	require.NoError(t, a.TryAcquireOrRenew(ctx), "renews")
	renewed := api.stored("ns", "l")
	assert.Equal(t, l.Spec.AcquireTime.Time, renewed.Spec.AcquireTime.Time, "a renewal keeps acquireTime")
	assert.True(t, renewed.Spec.RenewTime.After(l.Spec.RenewTime.Time))
	require.ErrorIs(t, b.TryAcquireOrRenew(ctx), lease.ErrHeld, "b saw a change: its clock starts again")

	// a stops renewing; its validity ends 1.5s after its renewal, b may
	// take over 2s after seeing it.
	w.advance(1500 * time.Millisecond)
	assert.False(t, a.Valid(a.Clock().Now()))
	require.ErrorIs(t, b.TryAcquireOrRenew(ctx), lease.ErrHeld)
	w.advance(500 * time.Millisecond)
	require.NoError(t, b.TryAcquireOrRenew(ctx), "takes over")
	l = api.stored("ns", "l")
	assert.Equal(t, "b", ptr.Deref(l.Spec.HolderIdentity, ""))
	assert.EqualValues(t, 1, ptr.Deref(l.Spec.LeaseTransitions, -1))

	// a's next renewal conflicts (its copy is stale), then it sees b.
	require.Error(t, a.TryAcquireOrRenew(ctx))
	require.ErrorIs(t, a.TryAcquireOrRenew(ctx), lease.ErrHeld)
	released, err := a.Release(ctx)
	require.NoError(t, err)
	assert.False(t, released, "releasing a Lease another holds does nothing")
	assert.Equal(t, "b", ptr.Deref(api.stored("ns", "l").Spec.HolderIdentity, ""))

	released, err = b.Release(ctx)
	require.NoError(t, err)
	assert.True(t, released)
	assert.False(t, b.Valid(b.Clock().Now()))
	l = api.stored("ns", "l")
	assert.Equal(t, "", ptr.Deref(l.Spec.HolderIdentity, "x"))
	assert.EqualValues(t, 1, ptr.Deref(l.Spec.LeaseDurationSeconds, 0))
	require.NoError(t, a.TryAcquireOrRenew(ctx), "a released Lease is free at once")
	assert.EqualValues(t, 2, ptr.Deref(api.stored("ns", "l").Spec.LeaseTransitions, -1))
}

func TestTakeOverOnAStaleReadConflicts(t *testing.T) {
	w := newWorld()
	api := newMemAPI(w)
	api.put(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "l"},
		Spec: lease.Record{Holder: "old", Duration: time.Second}.Spec()})
	racing := &racingAPI{memAPI: api}
	b := newHolder(t, racing, "b", skewed{w: w}, 1900*time.Millisecond, 1500*time.Millisecond)
	require.ErrorIs(t, b.TryAcquireOrRenew(t.Context()), lease.ErrHeld)
	w.advance(time.Second)
	// The holder renews between b's read and b's write: b decided on what
	// it read, so its write must fail rather than overwrite the renewal.
	racing.before = func() {
		l := api.stored("ns", "l")
		l.Spec.RenewTime = &metav1.MicroTime{Time: w.read()}
		api.put(l)
	}
	err := b.TryAcquireOrRenew(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "update lease ns/l")
	assert.Contains(t, err.Error(), "the object has been modified")
	assert.Equal(t, "old", ptr.Deref(api.stored("ns", "l").Spec.HolderIdentity, ""))
	assert.False(t, b.Valid(b.Clock().Now()))
}

// racingAPI runs before just before each Update is stored.
type racingAPI struct {
	*memAPI
	before func()
}

func (r *racingAPI) Update(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if r.before != nil {
		r.before()
	}
	return r.memAPI.Update(ctx, l)
}

// TestValidEndsBeforeAnyObserverExpires: with random request latencies
// and random clock offsets, the holder's last valid moment is strictly
// before the moment (true time) any observer first judges the Lease
// expired.
func TestValidEndsBeforeAnyObserverExpires(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const (
		d     = 1900 * time.Millisecond
		renew = 1500 * time.Millisecond
		step  = 10 * time.Millisecond
	)
	for i := range 50 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			w := newWorld()
			api := newMemAPI(w)
			off := func() time.Duration { return time.Duration(rng.Int64N(int64(2*time.Hour))) - time.Hour }
			h := newHolder(t, api, "h", skewed{w: w, off: off()}, d, renew)
			o := newHolder(t, api, "o", skewed{w: w, off: off()}, d, renew)
			api.latency = time.Duration(rng.Int64N(int64(300 * time.Millisecond)))
			require.NoError(t, h.TryAcquireOrRenew(t.Context()))
			for range 1 + rng.IntN(5) { // a few renewals, with an observer reading in between
				w.advance(time.Duration(rng.Int64N(int64(renew / 2))))
				api.latency = time.Duration(rng.Int64N(int64(300 * time.Millisecond)))
				require.NoError(t, h.TryAcquireOrRenew(t.Context()))
				api.latency = time.Duration(rng.Int64N(int64(300 * time.Millisecond)))
				require.ErrorIs(t, o.TryAcquireOrRenew(t.Context()), lease.ErrHeld)
			}
			// The holder stops renewing. Walk true time forward.
			api.latency = 0
			var lastValid, taken time.Time
			for taken.IsZero() {
				if h.Valid(h.Clock().Now()) {
					lastValid = w.read()
				}
				if o.TryAcquireOrRenew(t.Context()) == nil {
					taken = w.read()
				}
				w.advance(step)
			}
			assert.True(t, lastValid.Before(taken), "holder valid until %s, observer took over at %s", lastValid, taken)
			assert.GreaterOrEqual(t, taken.Sub(lastValid), lease.WrittenDuration(d)-renew-step, "the margin is at least written duration - RenewDeadline")
		})
	}
}

func TestRenewLoop(t *testing.T) {
	w := newWorld()
	api := newMemAPI(w)
	h, err := lease.NewHolder(lease.Config{API: api, Namespace: "ns", Name: "l", Identity: "a",
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, h.Acquire(t.Context(), nil))
	api.mu.Lock()
	api.fail = errors.New("connection refused")
	api.mu.Unlock()
	deadline := h.Deadline()
	err = h.Renew(t.Context())
	require.ErrorIs(t, err, lease.ErrNotRenewed)
	assert.Contains(t, err.Error(), "connection refused")
	assert.False(t, h.Valid(time.Now()))
	assert.WithinDuration(t, deadline, time.Now(), 200*time.Millisecond, "Renew returns as the deadline passes")
}

func TestRemaining(t *testing.T) {
	w := newWorld()
	api := newMemAPI(w)
	clock := skewed{w: w, off: 3 * time.Hour}
	h := newHolder(t, api, "a", clock, 1900*time.Millisecond, 1500*time.Millisecond)

	_, err := h.Remaining()
	require.ErrorIs(t, err, lease.ErrLost, "nothing held yet")
	assert.Equal(t, "lease ns/l: lease lost: not held by a", err.Error())

	require.NoError(t, h.TryAcquireOrRenew(t.Context()))
	left, err := h.Remaining()
	require.NoError(t, err)
	assert.Equal(t, 1500*time.Millisecond, left)
	w.advance(time.Second)
	left, err = h.Remaining()
	require.NoError(t, err)
	assert.Equal(t, 500*time.Millisecond, left, "Deadline minus now, on the holder's clock")

	w.advance(700 * time.Millisecond)
	_, err = h.Remaining()
	require.ErrorIs(t, err, lease.ErrLost)
	assert.Equal(t, "lease ns/l: lease lost: the hold of a ended 200ms ago (not renewed within 1.5s)", err.Error())
	assert.Equal(t, h.Valid(clock.Now()), err == nil, "Remaining agrees with Valid")

	require.NoError(t, h.TryAcquireOrRenew(t.Context()), "renewed by the same Holder: valid again")
	_, err = h.Remaining()
	require.NoError(t, err)
	_, err = h.Release(t.Context())
	require.NoError(t, err)
	_, err = h.Remaining()
	require.ErrorIs(t, err, lease.ErrLost, "released")
}

// TestRenewReturnsAtTheDeadlineWhenAnAttemptHangs: an API that ignores
// the renewal's context (a request waiting on a lock) does not keep Renew
// past the hold's Deadline.
func TestRenewReturnsAtTheDeadlineWhenAnAttemptHangs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newMemAPI(nil)
		h, err := lease.NewHolder(lease.Config{API: api, Namespace: "ns", Name: "l", Identity: "a",
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond})
		require.NoError(t, err)
		require.NoError(t, h.Acquire(t.Context(), nil))
		stuck := make(chan struct{})
		api.mu.Lock()
		api.stuck = stuck
		api.mu.Unlock()
		deadline := h.Deadline()
		err = h.Renew(t.Context())
		require.ErrorIs(t, err, lease.ErrNotRenewed)
		assert.Contains(t, err.Error(), "the last renewal did not return")
		assert.Equal(t, deadline, time.Now(), "Renew returns at the deadline")
		_, err = h.Remaining()
		require.ErrorIs(t, err, lease.ErrLost)
		close(stuck) // the hung attempt returns and sends nothing
		synctest.Wait()
		_, err = h.Remaining()
		require.ErrorIs(t, err, lease.ErrLost, "the late attempt did not renew")
	})
}
