package controller

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"

	"github.com/kubeloop/kubeloop/reconcile"
)

// TestLogConstructor: Options.LogConstructor makes the controller's logger
// (with nil) and each reconcile's (with the Request, plus reconcileID), the
// one Reconcile finds in its context, as controller-runtime's does.
func TestLogConstructor(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	base := logr.FromSlogHandler(slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil))
	var calls []*reconcile.Request
	ctor := func(req *reconcile.Request) logr.Logger {
		calls = append(calls, req)
		l := base.WithValues("controller", "cron")
		if req != nil {
			l = l.WithValues("cron", klog.KRef(req.Namespace, req.Name))
		}
		return l
	}
	r := reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		logr.FromContextOrDiscard(ctx).Info("in reconcile")
		return reconcile.Result{}, nil
	})
	c, err := NewUnmanaged("cron", Options{Reconciler: r, Logger: base, LogConstructor: ctor})
	require.NoError(t, err)
	require.Len(t, calls, 1)
	assert.Nil(t, calls[0], "the controller's own logger is made with nil")
	c.GetLogger().Info("controller line")

	_, err = c.Reconcile(t.Context(), webReq)
	require.NoError(t, err)
	require.Len(t, calls, 2)
	require.NotNil(t, calls[1])
	assert.Equal(t, webReq, *calls[1])

	mu.Lock()
	lines := jsonLines(t, &buf)
	mu.Unlock()
	require.Len(t, lines, 2)
	assert.Equal(t, []string{"controller"}, keysOf(lines[0]), "the constructor's keys only")
	assert.Equal(t, []string{"controller", "cron", "reconcileID"}, keysOf(lines[1]))
	assert.Equal(t, map[string]any{"name": "web", "namespace": "default"}, lines[1]["cron"])
	assert.NotEmpty(t, lines[1]["reconcileID"])
}
