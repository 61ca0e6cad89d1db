package reliability_test

import (
	"fmt"
	"strings"
	"sync"

	"github.com/go-logr/logr"
)

// logLine is one captured log call, fully rendered.
type logLine struct {
	error bool
	level int
	text  string // message, error and every key/value pair (%+v)
}

// capture is a logr sink at maximum verbosity that keeps every line.
type capture struct {
	mu    *sync.Mutex
	lines *[]logLine
	name  string
	kv    []any
}

func newCapture() *capture { return &capture{mu: &sync.Mutex{}, lines: &[]logLine{}} }

func (c *capture) logger() logr.Logger { return logr.New(c) }

func (c *capture) Init(logr.RuntimeInfo) {}
func (c *capture) Enabled(int) bool      { return true }
func (c *capture) Info(level int, msg string, kv ...any) {
	c.add(logLine{level: level, text: c.render(msg, nil, kv)})
}
func (c *capture) Error(err error, msg string, kv ...any) {
	c.add(logLine{error: true, text: c.render(msg, err, kv)})
}
func (c *capture) WithValues(kv ...any) logr.LogSink {
	n := *c
	n.kv = append(append([]any(nil), c.kv...), kv...)
	return &n
}
func (c *capture) WithName(name string) logr.LogSink {
	n := *c
	n.name = strings.TrimPrefix(c.name+"/"+name, "/")
	return &n
}

func (c *capture) render(msg string, err error, kv []any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", c.name, msg)
	if err != nil {
		fmt.Fprintf(&b, " error=%+v", err)
	}
	for _, v := range append(append([]any(nil), c.kv...), kv...) {
		fmt.Fprintf(&b, " %+v", v)
	}
	return b.String()
}

func (c *capture) add(l logLine) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.lines = append(*c.lines, l)
}

func (c *capture) all() []logLine {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]logLine(nil), *c.lines...)
}
