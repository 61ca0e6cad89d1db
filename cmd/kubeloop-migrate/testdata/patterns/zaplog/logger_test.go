package zaplog

import (
	"bytes"
	"errors"
	"flag"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

var iso8601 = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}`)

func TestLevelMinusTwoShowsV2(t *testing.T) {
	var buf bytes.Buffer
	log := New(&buf).WithName("test")
	log.Info("info line", "k", "v")
	log.V(1).Info("v1 line")
	log.V(2).Info("v2 line")
	log.V(3).Info("v3 line")
	log.Error(errors.New("boom"), "error line")

	out := buf.String()
	for _, want := range []string{"info line", "v1 line", "v2 line", "error line", "boom"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "v3 line") {
		t.Errorf("V(3) is shown at level -2:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "{") {
			t.Errorf("not a JSON line: %s", l)
		}
		if !iso8601.MatchString(l) {
			t.Errorf("no ISO 8601 timestamp in %s", l)
		}
	}
}

func TestBindFlags(t *testing.T) {
	var buf bytes.Buffer
	opts := zap.Options{DestWriter: &buf}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	opts.BindFlags(fs)
	if err := fs.Parse([]string{"--zap-log-level=debug", "--zap-encoder=json", "--zap-time-encoding=rfc3339"}); err != nil {
		t.Fatal(err)
	}
	log := zap.New(zap.UseFlagOptions(&opts))
	log.V(1).Info("debug line")
	log.V(2).Info("v2 line")
	out := buf.String()
	if !strings.Contains(out, "debug line") {
		t.Errorf("--zap-log-level=debug hides V(1):\n%s", out)
	}
	if strings.Contains(out, "v2 line") {
		t.Errorf("--zap-log-level=debug shows V(2):\n%s", out)
	}
	if !iso8601.MatchString(out) {
		t.Errorf("--zap-time-encoding=rfc3339 gives no RFC 3339 time:\n%s", out)
	}
}
