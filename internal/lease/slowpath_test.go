package lease_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/internal/lease"
)

// TestSlowPath: Config.SlowPath is called when the holder, holding the
// Lease, must read it before renewing because its last write failed
// (client-go's slow path), and only then: not on the first acquisition,
// not on a renewal from its own copy, not when the read shows another
// holder, not for a new Holder that finds its identity in the Lease.
func TestSlowPath(t *testing.T) {
	w := newWorld()
	api := newMemAPI(w)
	var slow int
	newCounting := func(identity string) *lease.Holder {
		h, err := lease.NewHolder(lease.Config{
			API: api, Namespace: "ns", Name: "l", Identity: identity,
			LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 300 * time.Millisecond,
			Clock: skewed{w: w}, SlowPath: func() { slow++ },
		})
		require.NoError(t, err)
		return h
	}
	a := newCounting("a")
	ctx := t.Context()
	require.NoError(t, a.TryAcquireOrRenew(ctx), "creates")
	w.advance(300 * time.Millisecond)
	require.NoError(t, a.TryAcquireOrRenew(ctx), "renews from its copy")
	assert.Zero(t, slow)

	// Someone else writes the Lease (a label, say): a's copy is stale.
	l := api.stored("ns", "l")
	l.Labels = map[string]string{"touched": "yes"}
	api.put(l)
	w.advance(300 * time.Millisecond)
	require.Error(t, a.TryAcquireOrRenew(ctx), "the renewal from the stale copy conflicts")
	assert.Zero(t, slow)
	require.NoError(t, a.TryAcquireOrRenew(ctx), "reads, then renews")
	assert.Equal(t, 1, slow, "the slow path")
	require.NoError(t, a.TryAcquireOrRenew(ctx))
	assert.Equal(t, 1, slow, "back on the fast path")

	// A new Holder of the same identity (a restart) reads a Lease naming
	// it: an acquisition, not a slow renewal.
	again := newCounting("a")
	require.NoError(t, again.TryAcquireOrRenew(ctx))
	assert.Equal(t, 1, slow)

	// a's copy is stale again (again wrote); its read shows itself as
	// holder: slow path. Then b takes over after expiry, and a's read
	// shows b: not a renewal.
	require.Error(t, a.TryAcquireOrRenew(ctx))
	require.NoError(t, a.TryAcquireOrRenew(ctx))
	assert.Equal(t, 2, slow)
	b := newCounting("b")
	require.ErrorIs(t, b.TryAcquireOrRenew(ctx), lease.ErrHeld)
	w.advance(2 * time.Second)
	require.NoError(t, b.TryAcquireOrRenew(ctx), "takes over")
	require.Error(t, a.TryAcquireOrRenew(ctx), "stale copy")
	require.ErrorIs(t, a.TryAcquireOrRenew(ctx), lease.ErrHeld)
	assert.Equal(t, 2, slow, "a read that shows another holder is no renewal")
}
