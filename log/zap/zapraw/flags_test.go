package zapraw_test

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"

	"github.com/kubeloop/kubeloop/log/zap/zapraw"
)

// parse binds the flags on a fresh set and parses args.
func parse(args ...string) (*zapraw.Options, error) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts := &zapraw.Options{}
	opts.BindFlags(fs)
	return opts, fs.Parse(args)
}

func TestFlagLevels(t *testing.T) {
	for _, tt := range []struct {
		give      string
		enabled   zapcore.Level // the lowest level logged
		stackFrom zapcore.Level
	}{
		{give: "--zap-log-level=debug", enabled: zapcore.DebugLevel},
		{give: "--zap-log-level=INFO", enabled: zapcore.InfoLevel},
		{give: "--zap-log-level=error", enabled: zapcore.ErrorLevel},
		{give: "--zap-log-level=panic", enabled: zapcore.PanicLevel},
		{give: "--zap-log-level=3", enabled: zapcore.Level(-3)},
		{give: "--zap-log-level=128", enabled: zapcore.Level(-128)},
	} {
		t.Run(tt.give, func(t *testing.T) {
			opts, err := parse(tt.give)
			require.NoError(t, err)
			require.NotNil(t, opts.Level)
			assert.True(t, opts.Level.Enabled(tt.enabled))
			if tt.enabled > zapcore.Level(-128) {
				assert.False(t, opts.Level.Enabled(tt.enabled-1))
			}
		})
	}
	opts, err := parse("--zap-stacktrace-level=info")
	require.NoError(t, err)
	assert.True(t, opts.StacktraceLevel.Enabled(zapcore.InfoLevel))
	assert.False(t, opts.StacktraceLevel.Enabled(zapcore.DebugLevel))
}

func TestFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		give string
		want string
	}{
		{give: "--zap-log-level=warn", want: `invalid value "warn" for flag -zap-log-level: invalid log level "warn": want debug, info, error, panic or a verbosity from 1 to 128`},
		{give: "--zap-log-level=0", want: `invalid log level "0"`},
		{give: "--zap-log-level=129", want: `invalid log level "129"`},
		{give: "--zap-stacktrace-level=debug", want: `invalid value "debug" for flag -zap-stacktrace-level: invalid stacktrace level "debug": want info, error or panic`},
		{give: "--zap-encoder=text", want: `invalid value "text" for flag -zap-encoder: invalid encoder value "text": want json or console`},
		{give: "--zap-time-encoding=unix", want: `invalid value "unix" for flag -zap-time-encoding: invalid time-encoding value "unix": want epoch, millis, nanos, iso8601, rfc3339 or rfc3339nano`},
	} {
		t.Run(tt.give, func(t *testing.T) {
			_, err := parse(tt.give)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestFlagsBuildTheLogger(t *testing.T) {
	opts, err := parse("--zap-devel", "--zap-encoder=json", "--zap-time-encoding=nanos", "--zap-log-level=2")
	require.NoError(t, err)
	var buf bytes.Buffer
	l := zapraw.New(zapraw.UseFlagOptions(opts), zapraw.WriteTo(&buf))
	l.V(2).Info("v2")
	l.V(3).Info("v3")
	got := lines(t, &buf)
	require.Len(t, got, 1, "V(2) shown, V(3) not: %q", buf.String())
	assert.Equal(t, "Level(-2)", got[0]["level"])
	assert.IsType(t, float64(0), got[0]["ts"], "nanos: a number")
	assert.Greater(t, got[0]["ts"].(float64), 1e18, "nanoseconds since the epoch")

	opts, err = parse("--zap-encoder=console")
	require.NoError(t, err)
	buf.Reset()
	zapraw.New(zapraw.UseFlagOptions(opts), zapraw.WriteTo(&buf)).Info("console in production")
	assert.Equal(t, []string{"INFO", "console in production"}, strings.Split(strings.TrimSpace(buf.String()), "\t")[1:])
}

func TestFlagDefaults(t *testing.T) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	opts := zapraw.Options{Development: true}
	opts.BindFlags(fs)
	for _, name := range []string{"zap-devel", "zap-encoder", "zap-log-level", "zap-stacktrace-level", "zap-time-encoding"} {
		assert.NotNil(t, fs.Lookup(name), "flag %s is defined", name)
	}
	assert.Equal(t, "true", fs.Lookup("zap-devel").DefValue, "the Options' value is the default")
	require.NoError(t, fs.Parse([]string{"--zap-log-level=error"}))
	assert.Equal(t, "error", fs.Lookup("zap-log-level").Value.String(), "a flag shows the value it took")
}
