package zapencoder

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestConsoleColours(t *testing.T) {
	var buf bytes.Buffer
	Console(&buf).WithName("setup").Info("starting manager", "addr", ":8080")
	line := strings.TrimSuffix(buf.String(), "\n")
	want := regexp.MustCompile("^\x1b\\[32m\\d\\d:\\d\\d\x1b\\[0m\t\x1b\\[34mINFO\x1b\\[0m\t\x1b\\[33msetup\x1b\\[0m\tstarting manager\t" + `\{"addr": ?":8080"\}$`)
	if !want.MatchString(line) {
		t.Fatalf("line %q does not match %s", line, want)
	}
}

func TestJSONKeys(t *testing.T) {
	var buf bytes.Buffer
	JSON(&buf).Info("reconciled", "name", "web")
	var m map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &m); err != nil {
		t.Fatalf("%v: %q", err, buf.String())
	}
	if m["message"] != "reconciled" || m["level"] != "INFO" || m["name"] != "web" {
		t.Fatalf("line %v", m)
	}
	ts, _ := m["time"].(string)
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}`).MatchString(ts) {
		t.Fatalf("time %q is not ISO 8601 with milliseconds", ts)
	}
	if _, ok := m["msg"]; ok {
		t.Fatalf("msg renamed to message: %v", m)
	}
}
