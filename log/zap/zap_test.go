package zap_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	klog "github.com/kubeloop/kubeloop/log"
	"github.com/kubeloop/kubeloop/log/zap"
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
		give []zap.Opts
		want []string // the "level" of each line written
	}{
		{name: "production: info", give: nil, want: []string{"info", "error"}},
		{name: "development: debug", give: []zap.Opts{zap.UseDevMode(true), zap.JSONEncoder()}, want: []string{"info", "debug", "error"}},
		{name: "Level(-2) is V(2)", give: []zap.Opts{zap.Level(zap.LevelValue(-2))}, want: []string{"info", "debug", "Level(-2)", "error"}},
		{name: "error only", give: []zap.Opts{zap.Level(zap.ErrorLevel)}, want: []string{"error"}},
		{name: "panic shows nothing", give: []zap.Opts{zap.Level(zap.PanicLevel)}, want: nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			logAll(zap.New(append(tt.give, zap.WriteTo(&buf))...))
			var got []string
			for _, l := range lines(t, &buf) {
				got = append(got, l["level"].(string))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestJSONLine(t *testing.T) {
	var buf bytes.Buffer
	l := zap.New(zap.WriteTo(&buf)).WithName("setup").WithName("sub").WithValues("controller", "web")
	l.Info("starting", "time", "user's field", "n", 3)
	l.Error(errors.New("no kind Widget"), "unable to create controller")
	got := lines(t, &buf)
	require.Len(t, got, 2)

	info := got[0]
	assert.Equal(t, "info", info["level"])
	assert.Equal(t, "starting", info["msg"])
	assert.Equal(t, "setup.sub", info["logger"], "names joined with a dot, as zapr does")
	assert.Equal(t, "web", info["controller"])
	assert.Equal(t, "user's field", info["time"], "a field named time is the user's")
	assert.Equal(t, float64(3), info["n"])
	ts, err := time.Parse(time.RFC3339, info["ts"].(string))
	require.NoError(t, err, "ts is RFC 3339 by default")
	assert.WithinDuration(t, time.Now(), ts, time.Minute)
	assert.NotContains(t, info, "stacktrace", "no stack trace below error in production")

	e := got[1]
	assert.Equal(t, "error", e["level"])
	assert.Equal(t, "no kind Widget", e["error"])
	assert.NotContains(t, e, "err")
	assert.Contains(t, e["stacktrace"], "log/zap_test.TestJSONLine\n\t", "the stack starts at the caller")
	assert.NotContains(t, e["stacktrace"], "log/slog.", "the logging machinery is left out")
}

func TestStacktraceLevel(t *testing.T) {
	var buf bytes.Buffer
	h := zap.NewHandler(zap.UseDevMode(true), zap.JSONEncoder(), zap.WriteTo(&buf))
	slog.New(h).Warn("careful")
	slog.New(h).Info("fine")
	l := zap.New(zap.WriteTo(&buf), zap.StacktraceLevel(zap.InfoLevel))
	l.Info("traced")
	l.V(1).Info("hidden")
	got := lines(t, &buf)
	require.Len(t, got, 3)
	assert.Equal(t, "warn", got[0]["level"])
	assert.Contains(t, got[0]["stacktrace"], "TestStacktraceLevel", "development traces warnings")
	assert.NotContains(t, got[1], "stacktrace")
	assert.Contains(t, got[2]["stacktrace"], "TestStacktraceLevel")
}

func TestTimeEncoders(t *testing.T) {
	at := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	for _, tt := range []struct {
		name string
		give zap.TimeEncoder
		want any
	}{
		{"iso8601", zap.ISO8601TimeEncoder, "2024-05-06T07:08:09.123Z"},
		{"rfc3339", zap.RFC3339TimeEncoder, "2024-05-06T07:08:09Z"},
		{"rfc3339nano", zap.RFC3339NanoTimeEncoder, "2024-05-06T07:08:09.123456789Z"},
		{"epoch", zap.EpochTimeEncoder, float64(at.UnixNano()) / 1e9},
		{"millis", zap.EpochMillisTimeEncoder, float64(at.UnixNano()) / 1e6},
		{"nanos", zap.EpochNanosTimeEncoder, at.UnixNano()},
		{"layout", zap.TimeEncoderOfLayout(time.Kitchen), "7:08AM"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.give(at).Any())
		})
	}

	// UseFlagOptions replaces everything given before it.
	var buf, lost bytes.Buffer
	zap.New(zap.WriteTo(&lost), zap.UseFlagOptions(&zap.Options{DestWriter: &buf})).Info("x")
	zap.New(zap.UseFlagOptions(&zap.Options{TimeEncoder: zap.EpochNanosTimeEncoder}), zap.WriteTo(&buf)).Info("x")
	assert.Empty(t, lost.String())
	got := lines(t, &buf)
	require.Len(t, got, 2, buf.String())
	assert.IsType(t, "", got[0]["ts"])
	n, ok := got[1]["ts"].(float64)
	require.True(t, ok, "epoch nanos is a number")
	assert.InDelta(t, float64(time.Now().UnixNano()), n, float64(time.Minute))
}

func TestConsole(t *testing.T) {
	var buf bytes.Buffer
	opts := zap.Options{Development: true, DestWriter: &buf, TimeEncoder: zap.ISO8601TimeEncoder}
	l := zap.New(zap.UseFlagOptions(&opts)).WithName("setup")
	l.Info("starting manager", "addr", ":8080")
	l.V(1).Info("detail")
	l.V(2).Info("hidden at debug")
	zap.New(zap.UseFlagOptions(&opts), zap.StacktraceLevel(zap.PanicLevel)).Error(errors.New("boom"), "failed")
	zap.New(zap.WriteTo(&buf), zap.ConsoleEncoder()).V(1).Info("hidden at info")

	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, got, 3, buf.String())
	ts := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d{4})`
	assert.Regexp(t, regexp.MustCompile(`^`+ts+"\tINFO\tsetup\tstarting manager\t"+`\{"addr":":8080"\}$`), got[0])
	assert.Regexp(t, regexp.MustCompile(`^`+ts+"\tDEBUG\tsetup\tdetail$"), got[1])
	assert.Regexp(t, regexp.MustCompile(`^`+ts+"\tERROR\tfailed\t"+`\{"error":"boom"\}$`), got[2])
}

func TestConsoleStacktrace(t *testing.T) {
	var buf bytes.Buffer
	zap.New(zap.UseDevMode(true), zap.WriteTo(&buf)).Error(errors.New("boom"), "failed")
	first, rest, ok := strings.Cut(buf.String(), "\n")
	require.True(t, ok)
	assert.Contains(t, first, "\tERROR\tfailed\t")
	assert.True(t, strings.HasPrefix(rest, "github.com/kubeloop/kubeloop/log/zap_test.TestConsoleStacktrace\n\t"), rest)
}

func TestFlags(t *testing.T) {
	for _, tt := range []struct {
		name string
		give []string
		want []string // levels logged by logAll
		json bool
	}{
		{name: "defaults", give: nil, want: []string{"info", "error"}, json: true},
		{name: "devel", give: []string{"--zap-devel"}, want: []string{"INFO", "DEBUG", "ERROR"}},
		{name: "devel json", give: []string{"--zap-devel", "--zap-encoder=JSON"}, want: []string{"info", "debug", "error"}, json: true},
		{name: "verbosity 3", give: []string{"--zap-log-level=3"}, want: []string{"info", "debug", "Level(-2)", "Level(-3)", "error"}, json: true},
		{name: "error", give: []string{"--zap-log-level", "error", "--zap-encoder", "console"}, want: []string{"ERROR"}},
		{name: "debug", give: []string{"--zap-log-level=Debug"}, want: []string{"info", "debug", "error"}, json: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			var opts zap.Options
			opts.BindFlags(fs)
			require.NoError(t, fs.Parse(append(tt.give, "--zap-stacktrace-level=panic")))
			var buf bytes.Buffer
			logAll(zap.New(zap.UseFlagOptions(&opts), zap.WriteTo(&buf)))
			var got []string
			if tt.json {
				for _, l := range lines(t, &buf) {
					got = append(got, l["level"].(string))
					assert.NotContains(t, l, "stacktrace")
				}
			} else {
				for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
					got = append(got, strings.Split(l, "\t")[1])
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("time encoding", func(t *testing.T) {
		for give, want := range map[string]*regexp.Regexp{
			"epoch":       regexp.MustCompile(`"ts":\d{10}\.\d+,`),
			"millis":      regexp.MustCompile(`"ts":\d{13}(\.\d+)?,`),
			"nanos":       regexp.MustCompile(`"ts":\d{19},`),
			"ISO8601":     regexp.MustCompile(`"ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d{4})"`),
			"rfc3339":     regexp.MustCompile(`"ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)"`),
			"rfc3339nano": regexp.MustCompile(`"ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"`),
		} {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			var opts zap.Options
			opts.BindFlags(fs)
			require.NoError(t, fs.Parse([]string{"--zap-time-encoding=" + give}))
			var buf bytes.Buffer
			zap.New(zap.UseFlagOptions(&opts), zap.WriteTo(&buf)).Info("x")
			assert.Regexp(t, want, buf.String(), give)
		}
	})

	t.Run("bad values", func(t *testing.T) {
		for _, give := range []string{
			"--zap-log-level=0", "--zap-log-level=-1", "--zap-log-level=warn", "--zap-log-level=129",
			"--zap-encoder=text", "--zap-stacktrace-level=debug", "--zap-time-encoding=unix", "--zap-devel=maybe",
		} {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var opts zap.Options
			opts.BindFlags(fs)
			err := fs.Parse([]string{give})
			name, value, _ := strings.Cut(strings.TrimPrefix(give, "--"), "=")
			if assert.Error(t, err, give) {
				assert.Contains(t, err.Error(), name, "the error names the flag")
				assert.Contains(t, err.Error(), value, "the error names the value")
			}
		}
	})
}

// The scaffold's wiring: ctrl.SetLogger(zap.New(...)) as the tool ports
// it, then kubeloop's log.Named logger and slog's own calls.
func TestSetDefault(t *testing.T) {
	saved := slog.Default()
	t.Cleanup(func() { slog.SetDefault(saved) })
	var buf bytes.Buffer
	slog.SetDefault(slog.New(logr.ToSlogHandler(zap.New(zap.WriteTo(&buf), zap.Level(zap.LevelValue(-4))))))

	klog.Named("setup").Info("starting manager")
	klog.Named("setup").V(1).Info("verbose")
	slog.Debug("slog debug is V(4)")
	slog.Warn("slog warn")
	got := lines(t, &buf)
	require.Len(t, got, 4, buf.String())
	assert.Equal(t, "setup", got[0]["logger"])
	assert.Equal(t, "starting manager", got[0]["msg"])
	assert.Equal(t, "debug", got[1]["level"])
	assert.Equal(t, "Level(-4)", got[2]["level"])
	assert.Equal(t, "warn", got[3]["level"])
}

// widget is a Kubernetes-shaped object: metadata getters and a TypeMeta.
type widget struct {
	TypeMeta        struct{ APIVersion, Kind string }
	Name, Namespace string
	Spec            struct{ Replicas int }
}

func (w *widget) GetName() string      { return w.Name }
func (w *widget) GetNamespace() string { return w.Namespace }

func TestObjects(t *testing.T) {
	w := &widget{Name: "web", Namespace: "prod"}
	w.TypeMeta.APIVersion, w.TypeMeta.Kind = "example.com/v1", "Widget"
	w.Spec.Replicas = 3
	var nilWidget *widget

	var prod, dev bytes.Buffer
	zap.New(zap.WriteTo(&prod)).Info("reconciled", "object", w, "none", nilWidget)
	zap.New(zap.WriteTo(&dev), zap.UseDevMode(true), zap.JSONEncoder()).Info("reconciled", "object", w)

	assert.Equal(t, map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "namespace": "prod", "name": "web"},
		lines(t, &prod)[0]["object"], "production logs a reference")
	assert.Nil(t, lines(t, &prod)[0]["none"])
	assert.Equal(t, map[string]any{"Replicas": float64(3)}, lines(t, &dev)[0]["object"].(map[string]any)["Spec"],
		"development logs the object in full")
}
