package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Process is one control-plane process. Set its exported fields, then
// Start it; Start may be called again after Stop (a restart on the same
// flags).
type Process struct {
	// Name names the process in errors: "etcd", "kube-apiserver".
	Name string
	// Path is the binary.
	Path string
	// Args are its flags.
	Args []string
	// Stdout and Stderr, when not nil, also receive its output.
	Stdout, Stderr io.Writer

	out    *tail
	cmd    *exec.Cmd
	exited chan struct{} // closed when Wait returned
	err    error         // Wait's result, valid after exited is closed
}

// Start starts the process in its own process group.
func (p *Process) Start() error {
	p.out = newTail(40)
	cmd := exec.Command(p.Path, p.Args...)
	cmd.Stdout, cmd.Stderr = io.Writer(p.out), io.Writer(p.out)
	if p.Stdout != nil {
		cmd.Stdout = io.MultiWriter(p.out, p.Stdout)
	}
	if p.Stderr != nil {
		cmd.Stderr = io.MultiWriter(p.out, p.Stderr)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,            // its own group, so a kill reaches children too
		Pdeathsig: syscall.SIGKILL, // dies with the test process, even after a panic
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("envtest: start %s: %w", p.Name, err)
	}
	p.cmd = cmd
	p.exited = make(chan struct{})
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return nil
}

// Running reports whether the process was started and has not exited.
func (p *Process) Running() bool {
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

// Stop kills the process group and waits for the process to exit.
func (p *Process) Stop(timeout time.Duration) error {
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
		return fmt.Errorf("envtest: %s (pid %d) did not exit within %s of SIGKILL", p.Name, p.cmd.Process.Pid, timeout)
	}
}

// PID returns the process id, or 0 when not running.
func (p *Process) PID() int {
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Output returns the last lines the process printed.
func (p *Process) Output() string {
	if p.out == nil {
		return ""
	}
	return p.out.String()
}

// WaitReady polls ready until it returns nil, the process exits, or ctx
// ends. Errors carry the last lines the process printed.
func (p *Process) WaitReady(ctx context.Context, ready func(context.Context) error) error {
	var last error
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if last = ready(ctx); last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("envtest: %s exited before it was ready (%v); last output:\n%s", p.Name, p.err, p.out)
		case <-ctx.Done():
			return fmt.Errorf("envtest: %s not ready: %w (last check: %v); last output:\n%s", p.Name, ctx.Err(), last, p.out)
		case <-tick.C:
		}
	}
}

// AddressInUse reports whether the process's output says its port was
// taken.
func (p *Process) AddressInUse() bool {
	s := p.Output()
	return strings.Contains(s, "address already in use") || strings.Contains(s, "bind: ")
}

// FreePort returns a loopback port that was free a moment ago. The caller
// retries on another if it is taken before the server binds it.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("envtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Gone reports whether no process with pid exists any more.
func Gone(pid int) bool {
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}
