package envtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// tail keeps the last lines a process printed, for error messages.
type tail struct {
	mu    sync.Mutex
	lines []string
	part  []byte
	max   int
}

func newTail(max int) *tail { return &tail{max: max} }

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

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := append([]string(nil), t.lines...)
	if len(t.part) > 0 {
		lines = append(lines, string(t.part))
	}
	return strings.Join(lines, "\n")
}

// process is one control-plane process.
type process struct {
	name   string
	path   string
	args   []string
	stdout io.Writer // also receives the output when not nil
	stderr io.Writer // also receives the errors when not nil
	out    *tail
	cmd    *exec.Cmd
	exited chan struct{} // closed when Wait returned
	err    error         // Wait's result, valid after exited is closed
}

func (p *process) start() error {
	p.out = newTail(40)
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout, cmd.Stderr = io.Writer(p.out), io.Writer(p.out)
	if p.stdout != nil {
		cmd.Stdout = io.MultiWriter(p.out, p.stdout)
	}
	if p.stderr != nil {
		cmd.Stderr = io.MultiWriter(p.out, p.stderr)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,            // its own group, so a kill reaches children too
		Pdeathsig: syscall.SIGKILL, // dies with the test process, even after a panic
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("envtest: start %s: %w", p.name, err)
	}
	p.cmd = cmd
	p.exited = make(chan struct{})
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return nil
}

// running reports whether the process was started and has not exited.
func (p *process) running() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop kills the process group and waits for the process to exit.
func (p *process) stop(timeout time.Duration) error {
	if p.cmd == nil {
		return nil
	}
	defer func() { p.cmd = nil }()
	select {
	case <-p.exited:
		return nil
	default:
	}
	// Both servers keep their state on disk or in etcd; a graceful shutdown
	// only costs time (kube-apiserver takes over 15 s), so kill at once.
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.exited:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("envtest: %s (pid %d) did not exit within %s of SIGKILL", p.name, p.cmd.Process.Pid, timeout)
	}
}

// pid returns the process id, or 0 when not running.
func (p *process) pid() int {
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// waitReady polls ready until it returns nil, the process exits, or ctx
// ends. Errors carry the last lines the process printed.
func (p *process) waitReady(ctx context.Context, ready func(context.Context) error) error {
	var last error
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if last = ready(ctx); last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("envtest: %s exited before it was ready (%v); last output:\n%s", p.name, p.err, p.out)
		case <-ctx.Done():
			return fmt.Errorf("envtest: %s not ready: %w (last check: %v); last output:\n%s", p.name, ctx.Err(), last, p.out)
		case <-tick.C:
		}
	}
}

// addressInUse reports whether a process's output says its port was taken.
func (p *process) addressInUse() bool {
	s := p.out.String()
	return strings.Contains(s, "address already in use") || strings.Contains(s, "bind: ")
}

// freePort returns a loopback port that was free a moment ago. The caller
// retries on another if it is taken before the server binds it.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("envtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// processGone reports whether no process with pid exists any more.
func processGone(pid int) bool {
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}

func itoa(i int) string { return strconv.Itoa(i) }

func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("envtest: write %s: %w", path, err)
	}
	return nil
}
