package log_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/log"
)

// useDefault makes slog's default a JSON handler writing to a buffer for
// the test, and restores the previous default after it.
func useDefault(t *testing.T, opts *slog.HandlerOptions) *bytes.Buffer {
	t.Helper()
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	var buf bytes.Buffer
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, opts)))
	return &buf
}

// capture returns a logger that appends each line to lines.
func capture(lines *[]string) logr.Logger {
	return funcr.New(func(prefix, args string) { *lines = append(*lines, prefix+" "+args) }, funcr.Options{})
}

func TestFromContextReturnsTheContextsLogger(t *testing.T) {
	var lines []string
	ctx := log.IntoContext(context.Background(), capture(&lines).WithName("reconcile").WithValues("name", "web"))

	log.FromContext(ctx, "step", "scale").Info("scaled")

	require.Len(t, lines, 1)
	assert.Equal(t, `reconcile "level"=0 "msg"="scaled" "name"="web" "step"="scale"`, lines[0])
}

func TestFromContextWithoutLoggerWritesThroughSlogDefault(t *testing.T) {
	buf := useDefault(t, nil)
	for _, ctx := range []context.Context{context.Background(), nil} {
		log.FromContext(ctx, "k", "v").Error(errors.New("boom"), "failed")
	}
	out := buf.String()
	assert.Equal(t, 2, strings.Count(out, `"msg":"failed","k":"v","err":"boom"`), out)
}

func TestNamedFollowsALaterSlogDefault(t *testing.T) {
	setup := log.Named("setup").WithValues("version", "v1") // package-level var style: made before main configures slog

	first := useDefault(t, nil)
	setup.Info("starting")
	second := useDefault(t, nil)
	setup.V(0).Info("started")
	setup.WithName("webhooks").Info("registered", "n", 2)

	assert.Contains(t, first.String(), `"msg":"starting","version":"v1","logger":"setup"`)
	assert.NotContains(t, first.String(), "started")
	assert.Contains(t, second.String(), `"msg":"started","version":"v1","logger":"setup"`)
	assert.Contains(t, second.String(), `"msg":"registered","version":"v1","logger":"setup/webhooks","n":2`)
}

func TestVerbosityFollowsTheHandlersLevel(t *testing.T) {
	buf := useDefault(t, &slog.HandlerOptions{Level: slog.LevelInfo})
	l := log.Default()
	assert.True(t, l.Enabled())
	assert.False(t, l.V(1).Enabled(), "V(1) is slog's debug level")
	l.V(1).Info("hidden")
	assert.Empty(t, buf.String())
}

func TestCallSiteIsTheCaller(t *testing.T) {
	buf := useDefault(t, &slog.HandlerOptions{AddSource: true})
	log.Named("x").Info("here")
	log.Default().WithCallDepth(0).WithValues("a", 1).Info("again")
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		assert.Contains(t, line, `"file":"`, line)
		var file string
		if i := strings.Index(line, `"file":"`); i >= 0 {
			file, _, _ = strings.Cut(line[i+len(`"file":"`):], `"`)
		}
		assert.Equal(t, "log_test.go", filepath.Base(file), line)
	}
}

func TestDiscardDefault(t *testing.T) {
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	slog.SetDefault(slog.New(logr.ToSlogHandler(logr.Discard())))
	l := log.Named("quiet")
	assert.False(t, l.Enabled())
	l.Info("dropped") // must not panic on the missing sink
	l.Error(errors.New("x"), "dropped")
}
