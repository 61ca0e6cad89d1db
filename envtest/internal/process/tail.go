package process

import (
	"bytes"
	"strings"
	"sync"
)

// tail keeps the last lines a process printed, for error messages.
type tail struct {
	mu    sync.Mutex
	lines []string
	part  []byte
	max   int
}

func newTail(max int) *tail { return &tail{max: max} }

// Write keeps p's complete lines, dropping the oldest beyond max.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.part = append(t.part, p...)
	for {
		i := bytes.IndexByte(t.part, '\n')
		if i < 0 {
			break
		}
		t.lines = append(t.lines, string(t.part[:i]))
		t.part = t.part[i+1:]
		if len(t.lines) > t.max {
			t.lines = t.lines[len(t.lines)-t.max:]
		}
	}
	return len(p), nil
}

// String returns the kept lines and an unfinished last one.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := append([]string(nil), t.lines...)
	if len(t.part) > 0 {
		lines = append(lines, string(t.part))
	}
	return strings.Join(lines, "\n")
}
