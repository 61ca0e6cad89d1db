package lease_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetAnnotationRidesTheNextWrite(t *testing.T) {
	w := newWorld()
	api := newMemAPI(w)
	a := newHolder(t, api, "a", skewed{w: w}, 2*time.Second, 1500*time.Millisecond)
	ctx := t.Context()

	a.SetAnnotation("view", "v1")
	require.NoError(t, a.TryAcquireOrRenew(ctx), "creates the Lease")
	assert.Equal(t, "v1", api.stored("ns", "l").Annotations["view"], "the creation carries it")

	a.SetAnnotation("view", "v2")
	assert.Equal(t, "v1", api.stored("ns", "l").Annotations["view"], "SetAnnotation writes nothing itself")
	require.NoError(t, a.TryAcquireOrRenew(ctx))
	assert.Equal(t, "v2", api.stored("ns", "l").Annotations["view"], "the renewal carries the new value")

	// A holder that was not told about the annotation keeps it.
	require.NoError(t, a.TryAcquireOrRenew(ctx))
	b := newHolder(t, api, "a", skewed{w: w}, 2*time.Second, 1500*time.Millisecond)
	require.NoError(t, b.TryAcquireOrRenew(ctx))
	assert.Equal(t, "v2", api.stored("ns", "l").Annotations["view"])

	b.SetAnnotation("view", "")
	require.NoError(t, b.TryAcquireOrRenew(ctx))
	_, ok := api.stored("ns", "l").Annotations["view"]
	assert.False(t, ok, `"" removes it`)
	assert.Equal(t, "x", api.stored("ns", "l").Labels["app"], "labels are untouched")
}
