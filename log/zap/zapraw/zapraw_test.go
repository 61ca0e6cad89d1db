package zapraw_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kubeloop/kubeloop/log/zap/zapraw"
)

// lines parses buf as one JSON object a line.
func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), "line %q", l)
		out = append(out, m)
	}
	return out
}

// logAll logs one line at each of V(0) to V(3) and one error.
func logAll(l logr.Logger) {
	for v := range 4 {
		l.V(v).Info("info", "v", v)
	}
	l.Error(errors.New("boom"), "failed")
}

func TestLevels(t *testing.T) {
	for _, tt := range []struct {
		name string
		give []zapraw.Opts
		want []string // the "level" of each line written
	}{
		{name: "production: info", give: nil, want: []string{"info", "error"}},
		{name: "development: debug", give: []zapraw.Opts{zapraw.UseDevMode(true), zapraw.JSONEncoder()}, want: []string{"info", "debug", "error"}},
		{name: "Level(-2) is V(2)", give: []zapraw.Opts{zapraw.Level(zapcore.Level(-2))}, want: []string{"info", "debug", "Level(-2)", "error"}},
		{name: "an AtomicLevel", give: []zapraw.Opts{zapraw.Level(zap.NewAtomicLevelAt(zapcore.ErrorLevel))}, want: []string{"error"}},
		{name: "panic shows nothing", give: []zapraw.Opts{zapraw.Level(zapcore.PanicLevel)}, want: nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			logAll(zapraw.New(append(tt.give, zapraw.WriteTo(&buf))...))
			var got []string
			for _, l := range lines(t, &buf) {
				got = append(got, l["level"].(string))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestProductionLine(t *testing.T) {
	var buf bytes.Buffer
	l := zapraw.New(zapraw.WriteTo(&buf)).WithName("setup").WithName("sub").WithValues("controller", "web")
	l.Info("starting", "n", 3)
	l.Error(errors.New("no kind Widget"), "unable to create controller")
	got := lines(t, &buf)
	require.Len(t, got, 2)

	info := got[0]
	assert.Equal(t, "info", info["level"])
	assert.Equal(t, "starting", info["msg"])
	assert.Equal(t, "setup.sub", info["logger"], "names joined with '.'")
	assert.Equal(t, "web", info["controller"])
	assert.InDelta(t, 3, info["n"], 0)
	ts, ok := info["ts"].(string)
	require.True(t, ok, "ts is a string: %v", info["ts"])
	_, err := time.Parse(time.RFC3339, ts)
	assert.NoError(t, err, "ts is RFC 3339")
	assert.NotContains(t, info, "stacktrace", "no stack trace below ErrorLevel")
	assert.NotContains(t, info, "caller", "no caller unless zap.AddCaller()")

	failed := got[1]
	assert.Equal(t, "error", failed["level"])
	assert.Equal(t, "no kind Widget", failed["error"])
	assert.Contains(t, failed["stacktrace"], "zapraw_test.TestProductionLine", "the stack starts at the caller")
}

func TestDevelopmentLine(t *testing.T) {
	var buf bytes.Buffer
	l := zapraw.New(zapraw.WriteTo(&buf), zapraw.UseDevMode(true)).WithName("setup")
	l.V(1).Info("debug shown", "k", "v")
	l.Error(errors.New("boom"), "failed")
	out := strings.Split(buf.String(), "\n")
	require.Greater(t, len(out), 3, "two lines and a stack trace: %q", buf.String())

	cols := strings.Split(out[0], "\t")
	require.Len(t, cols, 5, "timestamp, level, name, message, fields: %q", out[0])
	_, err := time.Parse(time.RFC3339, cols[0])
	assert.NoError(t, err, "the timestamp is RFC 3339")
	assert.Equal(t, []string{"DEBUG", "setup", "debug shown", `{"k": "v"}`}, cols[1:])

	assert.Equal(t, []string{"ERROR", "setup", "failed", `{"error": "boom"}`}, strings.Split(out[1], "\t")[1:])
	assert.Contains(t, out[2], "zapraw_test.TestDevelopmentLine", "the stack trace follows on the next lines")
}

func TestStacktraceLevel(t *testing.T) {
	for _, tt := range []struct {
		name string
		give []zapraw.Opts
		want []bool // a stack trace on info, warn, error
	}{
		{name: "production: from error", want: []bool{false, false, true}},
		{name: "development: from warn", give: []zapraw.Opts{zapraw.UseDevMode(true), zapraw.JSONEncoder()}, want: []bool{false, true, true}},
		{name: "set: from info", give: []zapraw.Opts{zapraw.StacktraceLevel(zapcore.InfoLevel)}, want: []bool{true, true, true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := zapraw.NewRaw(append(tt.give, zapraw.WriteTo(&buf))...)
			l.Info("i")
			l.Warn("w")
			l.Error("e")
			var got []bool
			for _, line := range lines(t, &buf) {
				_, ok := line["stacktrace"]
				got = append(got, ok)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestEncoders(t *testing.T) {
	epoch := func(v any) bool { _, ok := v.(float64); return ok }
	rfc3339 := func(v any) bool {
		s, ok := v.(string)
		_, err := time.Parse(time.RFC3339, s)
		return ok && err == nil && !strings.Contains(s, ".")
	}
	millis := func(v any) bool {
		s, ok := v.(string)
		return ok && strings.Contains(s, ".")
	}
	for _, tt := range []struct {
		name string
		give []zapraw.Opts
		ts   func(any) bool
	}{
		{name: "default: RFC 3339", ts: rfc3339},
		{name: "TimeEncoder", give: []zapraw.Opts{func(o *zapraw.Options) { o.TimeEncoder = zapcore.EpochTimeEncoder }}, ts: epoch},
		{name: "EncoderConfigOptions win over TimeEncoder", give: []zapraw.Opts{func(o *zapraw.Options) {
			o.TimeEncoder = zapcore.EpochTimeEncoder
			o.EncoderConfigOptions = []zapraw.EncoderConfigOption{func(c *zapcore.EncoderConfig) { c.EncodeTime = zapcore.ISO8601TimeEncoder }}
		}}, ts: millis},
		{name: "JSONEncoder: zap's production config, epoch", give: []zapraw.Opts{zapraw.JSONEncoder(), func(o *zapraw.Options) { o.TimeEncoder = zapcore.ISO8601TimeEncoder }}, ts: epoch},
		{name: "JSONEncoder's options", give: []zapraw.Opts{zapraw.JSONEncoder(func(c *zapcore.EncoderConfig) { c.EncodeTime = zapcore.RFC3339TimeEncoder })}, ts: rfc3339},
		{name: "Encoder as it is", give: []zapraw.Opts{zapraw.Encoder(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()))}, ts: epoch},
		{name: "NewEncoder gets TimeEncoder", give: []zapraw.Opts{func(o *zapraw.Options) {
			o.NewEncoder = func(opts ...zapraw.EncoderConfigOption) zapcore.Encoder {
				c := zap.NewProductionEncoderConfig()
				for _, opt := range opts {
					opt(&c)
				}
				return zapcore.NewJSONEncoder(c)
			}
		}}, ts: rfc3339},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			zapraw.NewRaw(append(tt.give, zapraw.WriteTo(&buf))...).Info("x")
			got := lines(t, &buf)
			require.Len(t, got, 1)
			assert.True(t, tt.ts(got[0]["ts"]), "ts %v", got[0]["ts"])
		})
	}
}

func TestConsoleEncoderInProduction(t *testing.T) {
	var buf bytes.Buffer
	l := zapraw.New(zapraw.WriteTo(&buf), zapraw.ConsoleEncoder())
	l.V(1).Info("hidden at info")
	l.Info("shown")
	cols := strings.Split(strings.TrimSpace(buf.String()), "\t")
	require.Len(t, cols, 3, "one console line: %q", buf.String())
	_, err := time.Parse("2006-01-02T15:04:05.000Z0700", cols[0])
	assert.NoError(t, err, "ConsoleEncoder's own config: ISO 8601")
	assert.Equal(t, []string{"INFO", "shown"}, cols[1:])
}

func TestZapOptsApply(t *testing.T) {
	var buf bytes.Buffer
	var hooked int
	opts := zapraw.Options{DestWriter: &buf, ZapOpts: []zap.Option{zap.Hooks(func(zapcore.Entry) error { hooked++; return nil })}}
	l := zapraw.NewRaw(zapraw.UseFlagOptions(&opts), zapraw.RawZapOpts(zap.AddCaller()))
	l.Info("x")
	got := lines(t, &buf)
	require.Len(t, got, 1)
	assert.Contains(t, got[0]["caller"], "zapraw_test.go:", "zap.AddCaller() applies")
	assert.Equal(t, 1, hooked, "Options.ZapOpts apply")
}

func TestOptionsAreNotChanged(t *testing.T) {
	opts := zapraw.Options{ZapOpts: make([]zap.Option, 0, 8), EncoderConfigOptions: make([]zapraw.EncoderConfigOption, 0, 8)}
	before := opts
	var a, b bytes.Buffer
	zapraw.NewRaw(zapraw.UseFlagOptions(&opts), zapraw.WriteTo(&a)).Info("a")
	zapraw.NewRaw(zapraw.UseFlagOptions(&opts), zapraw.WriteTo(&b)).Info("b")
	assert.Equal(t, before.Level, opts.Level)
	assert.Nil(t, opts.Encoder)
	assert.Nil(t, opts.NewEncoder)
	for i, o := range opts.ZapOpts[:cap(opts.ZapOpts)] {
		assert.Nil(t, o, "ZapOpts' spare capacity %d is not written to", i)
	}
	assert.Len(t, lines(t, &a), 1, "the first logger writes only its own line")
	assert.Len(t, lines(t, &b), 1)
}

// TestSampling runs in a synctest bubble: time stands still until the
// test sleeps, so the sampler's one-second window is the test's to move.
func TestSampling(t *testing.T) {
	for _, tt := range []struct {
		name string
		give []zapraw.Opts
		want int // lines of 250 alike within one second
	}{
		{name: "production: the first 100, then every 100th", want: 101},
		{name: "Level(-2): no sampling", give: []zapraw.Opts{zapraw.Level(zapcore.Level(-2))}, want: 250},
		{name: "development: no sampling", give: []zapraw.Opts{zapraw.UseDevMode(true), zapraw.JSONEncoder()}, want: 250},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var buf bytes.Buffer
				l := zapraw.NewRaw(append(tt.give, zapraw.WriteTo(&buf))...)
				for range 250 {
					l.Info("same message")
				}
				assert.Len(t, lines(t, &buf), tt.want)

				buf.Reset()
				time.Sleep(time.Second)
				for range 50 {
					l.Info("same message")
				}
				assert.Len(t, lines(t, &buf), 50, "a new second starts a new count")
			})
		})
	}
}
