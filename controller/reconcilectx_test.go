package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

type parentKey struct{}

func TestReconcileContext(t *testing.T) {
	require.NotNil(t, logrContextKey, "logr.FromContext asks for its key: the one-allocation path is used")

	var lines []string
	var mu sync.Mutex
	base := funcr.New(func(_, args string) { mu.Lock(); lines = append(lines, args); mu.Unlock() }, funcr.Options{})
	parent, cancel := context.WithCancel(context.WithValue(t.Context(), parentKey{}, "p"))
	ctx, log := newReconcileContext(parent, base, "", webReq)

	id := ReconcileIDFromContext(ctx)
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, string(id))
	assert.Equal(t, id, ReconcileIDFromContext(ctx), "one ID per reconcile")
	assert.Equal(t, "p", ctx.Value(parentKey{}), "the parent's values are visible")

	fromCtx, err := logr.FromContext(ctx)
	require.NoError(t, err)
	assert.Equal(t, log, fromCtx, "logr.FromContext returns the reconcile's logger")
	// Concurrent first uses build one ID and one logger.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			logr.FromContextOrDiscard(ctx).Info("hi")
			assert.Equal(t, id, ReconcileIDFromContext(ctx))
		})
	}
	wg.Wait()
	require.Len(t, lines, 4)
	assert.Contains(t, lines[0], `"namespace"="default" "name"="web" "reconcileID"="`+string(id)+`"`)

	// Derived contexts see cancellation through it.
	child, stop := context.WithTimeout(ctx, time.Hour)
	defer stop()
	assert.NoError(t, child.Err())
	cancel()
	<-child.Done()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	assert.ErrorIs(t, child.Err(), context.Canceled)
	assert.Equal(t, id, ReconcileIDFromContext(child))

	other, _ := newReconcileContext(t.Context(), base, "", webReq)
	assert.NotEqual(t, id, ReconcileIDFromContext(other))
}

func TestReconcileContextDiscard(t *testing.T) {
	ctx, log := newReconcileContext(t.Context(), logr.Discard(), "", webReq)
	assert.Equal(t, logr.Discard(), log)
	assert.Equal(t, logr.Discard(), logr.FromContextOrDiscard(ctx))
	assert.NotEqual(t, types.UID(""), ReconcileIDFromContext(ctx))
}

func TestReconcileContextAllocs(t *testing.T) {
	base := funcr.New(func(string, string) {}, funcr.Options{})
	ctx := t.Context()
	allocs := testing.AllocsPerRun(100, func() { _, _ = newReconcileContext(ctx, base, "Widget", webReq) })
	assert.Equal(t, 1.0, allocs, "the context, its ID and its logger are one allocation")
}
