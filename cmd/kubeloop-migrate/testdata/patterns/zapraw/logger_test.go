package zapraw

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/go-logr/zapr"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func jsonLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// main's flags in production: JSON lines from both the operator's logger
// and controller-runtime's, one *zap.Logger underneath.
func TestSetupProduction(t *testing.T) {
	var buf bytes.Buffer
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	log, err := Setup(fs, []string{"--zap-devel=false", "--zap-log-level=debug"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0"}}
	log.Named("keeper").WithObject(t.Context(), pod).Debug("sync", "replicas", 3)
	log.Info("pod seen", "pod", pod)
	log.Error(errors.New("boom"), "sync failed")
	logf.Log.WithName("controller").Info("through controller-runtime's logger")

	lines := jsonLines(t, &buf)
	if len(lines) != 5 {
		t.Fatalf("want 5 lines, got %d:\n%s", len(lines), buf.String())
	}
	want := []map[string]any{
		{"level": "info", "logger": "setup", "msg": "logging set up", "devel": false},
		{"level": "debug", "logger": "keeper", "msg": "sync", "namespace": "shop", "name": "web-0", "replicas": 3.0},
		{"level": "info", "msg": "pod seen", "pod": map[string]any{"apiVersion": "v1", "kind": "Pod", "namespace": "shop", "name": "web-0"}},
		{"level": "error", "msg": "sync failed", "error": "boom"},
		{"level": "info", "logger": "controller", "msg": "through controller-runtime's logger"},
	}
	for i, w := range want {
		w["operator"] = "patterns"
		got := lines[i]
		if _, ok := got["ts"].(string); !ok {
			t.Errorf("line %d: ts %v, want an RFC 3339 string", i, got["ts"])
		}
		delete(got, "ts")
		_, stack := got["stacktrace"]
		if stack != (w["level"] == "error") {
			t.Errorf("line %d: stacktrace %v, want one only at error", i, stack)
		}
		delete(got, "stacktrace")
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(w)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("line %d:\n got %s\nwant %s", i, gotJSON, wantJSON)
		}
	}
}

// A test suite's logger, as the operator's suites build it: development
// mode into the suite's writer (GinkgoWriter), the operator's Logger and a
// logr.Logger (what the suites give logf.SetLogger, once per process) over
// one *zap.Logger.
func TestSuiteLogger(t *testing.T) {
	var buf bytes.Buffer
	logger := zap.NewRaw(zap.WriteTo(&buf), zap.UseDevMode(true))
	log := NewLogger(logger)
	if !log.Enabled(zapcore.DebugLevel) {
		t.Error("development logs debug")
	}
	log.Debug("reconcile", "step", "statefulset")
	zapr.NewLogger(logger).WithName("suite").V(1).Info("from logr")

	got := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(got) != 2 {
		t.Fatalf("want 2 lines, got %q", buf.String())
	}
	for i, want := range []string{"DEBUG\treconcile\t{\"step\": \"statefulset\"}", "DEBUG\tsuite\tfrom logr"} {
		_, rest, _ := strings.Cut(got[i], "\t") // after the timestamp
		if rest != want {
			t.Errorf("line %d: got %q, want %q", i, rest, want)
		}
	}
}

func TestSetupRejectsABadLevel(t *testing.T) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	_, err := Setup(fs, []string{"--zap-log-level=loud"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `invalid log level "loud"`) {
		t.Fatalf("err = %v, want one naming the level", err)
	}
}
