package controller

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingSink counts WithValues calls on the sink it wraps.
type countingSink struct {
	logr.LogSink
	withValues *int
}

func (c countingSink) WithValues(kv ...any) logr.LogSink {
	*c.withValues++
	return countingSink{LogSink: c.LogSink.WithValues(kv...), withValues: c.withValues}
}

func (c countingSink) WithCallDepth(depth int) logr.LogSink {
	return countingSink{LogSink: c.LogSink.(logr.CallDepthLogSink).WithCallDepth(depth), withValues: c.withValues}
}

func here() int {
	_, _, line, _ := runtime.Caller(1)
	return line
}

func TestRequestLoggerFuncr(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{LogCaller: funcr.All}).WithName("ctrl")
	var calls int
	base = base.WithSink(countingSink{LogSink: base.GetSink(), withValues: &calls})

	log := requestLogger(base, "ns", "web", fixedReconcileID("id-1"))
	assert.Zero(t, calls, "nothing is attached before something is logged")
	line := here() + 1
	log.Info("hello", "k", "v")
	log.V(1).Info("hidden")
	log.Error(nil, "failed")
	assert.Equal(t, 1, calls, "the values are attached once")
	require.Len(t, lines, 2)
	for _, l := range lines {
		assert.Contains(t, l, `"namespace"="ns" "name"="web" "reconcileID"="id-1"`)
	}
	assert.Contains(t, lines[0], `"k"="v"`)
	assert.Contains(t, lines[0], `"file"="reqlog_test.go" "line"=`+itoa(line), "the call site is the caller's")

	lines = nil
	derived := log.WithValues("extra", 1).WithName("sub")
	line = here() + 1
	derived.Info("again")
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], `"namespace"="ns" "name"="web" "reconcileID"="id-1" "extra"=1`)
	assert.Contains(t, lines[0], `"file"="reqlog_test.go" "line"=`+itoa(line))

	assert.Equal(t, logr.Discard(), requestLogger(logr.Discard(), "ns", "web", fixedReconcileID("id")))
}

func TestRequestLoggerSlogSource(t *testing.T) {
	var buf bytes.Buffer
	base := logr.FromSlogHandler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{AddSource: true}))
	log := requestLogger(base, "ns", "web", fixedReconcileID("id-2"))
	line := here() + 1
	log.Info("hello")
	var rec struct {
		Namespace, Name, ReconcileID string
		Source                       struct {
			File string
			Line int
		}
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &rec), buf.String())
	assert.Equal(t, "ns", rec.Namespace)
	assert.Equal(t, "web", rec.Name)
	assert.Equal(t, "id-2", rec.ReconcileID)
	assert.Equal(t, "reqlog_test.go", filepath.Base(rec.Source.File))
	assert.Equal(t, line, rec.Source.Line)
}

func itoa(n int) string { return strconv.Itoa(n) }
