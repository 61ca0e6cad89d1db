package process_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/envtest/internal/process"
)

// sh returns a Process running script under /bin/sh.
func sh(name, script string) *process.Process {
	return &process.Process{Name: name, Path: "/bin/sh", Args: []string{"-c", script}}
}

func TestStartWaitStop(t *testing.T) {
	var out strings.Builder
	p := sh("server", "echo listening; exec sleep 300")
	p.Stdout = &out
	require.NoError(t, p.Start())
	require.True(t, p.Running())
	pid := p.PID()
	require.NotZero(t, pid)

	err := p.WaitReady(context.Background(), func(context.Context) error {
		if strings.Contains(p.Output(), "listening") {
			return nil
		}
		return assert.AnError
	})
	require.NoError(t, err)

	require.NoError(t, p.Stop(time.Minute))
	assert.False(t, p.Running())
	assert.Zero(t, p.PID())
	assert.True(t, process.Gone(pid), "pid %d still exists after Stop", pid)
	assert.Contains(t, out.String(), "listening", "Stdout gets the output too")
	assert.NoError(t, p.Stop(time.Minute), "a second Stop does nothing")
}

func TestWaitReadyProcessExited(t *testing.T) {
	p := sh("etcd", "echo 'bind: address already in use' >&2; exit 3")
	require.NoError(t, p.Start())
	err := p.WaitReady(context.Background(), func(context.Context) error { return assert.AnError })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "envtest: etcd exited before it was ready (exit status 3); last output:\nbind: address already in use")
	assert.True(t, p.AddressInUse())
	require.NoError(t, p.Stop(time.Minute))
}

func TestWaitReadyContextEnds(t *testing.T) {
	p := sh("kube-apiserver", "echo starting; exec sleep 300")
	require.NoError(t, p.Start())
	defer func() { require.NoError(t, p.Stop(time.Minute)) }()
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := p.WaitReady(ctx, func(context.Context) error {
		calls++
		if calls == 2 {
			cancel()
		}
		return assert.AnError
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "envtest: kube-apiserver not ready")
	assert.Contains(t, err.Error(), "last check: "+assert.AnError.Error())
	assert.False(t, p.AddressInUse())
}

func TestStartMissingBinary(t *testing.T) {
	p := &process.Process{Name: "etcd", Path: "/nonexistent/etcd"}
	err := p.Start()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "envtest: start etcd:")
	assert.False(t, p.Running())
	assert.NoError(t, p.Stop(time.Second))
}

func TestOutputKeepsTheLastLines(t *testing.T) {
	p := sh("chatty", "i=0; while [ $i -lt 100 ]; do echo line$i; i=$((i+1)); done; printf tail")
	require.NoError(t, p.Start())
	err := p.WaitReady(context.Background(), func(context.Context) error { return assert.AnError })
	require.Error(t, err) // it exits
	lines := strings.Split(p.Output(), "\n")
	require.Len(t, lines, 41, "40 lines and the unfinished one")
	assert.Equal(t, "line60", lines[0])
	assert.Equal(t, "tail", lines[40])
	require.NoError(t, p.Stop(time.Minute))
}

func TestHTTPReady(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			_, _ = w.Write([]byte("ok"))
			return
		}
		http.Error(w, "not yet", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	ctx := context.Background()
	assert.NoError(t, process.HTTPReady(srv.Client(), srv.URL+"/readyz", "ok")(ctx))
	assert.ErrorContains(t, process.HTTPReady(srv.Client(), srv.URL+"/readyz", `"health":"true"`)(ctx), `unexpected answer "ok"`)
	assert.ErrorContains(t, process.HTTPReady(srv.Client(), srv.URL+"/livez", "")(ctx), "503 Service Unavailable: not yet")
}

func TestFreePort(t *testing.T) {
	port, err := process.FreePort()
	require.NoError(t, err)
	assert.Positive(t, port)
}

func TestWaitContext(t *testing.T) {
	ctx, cancel := process.WaitContext(context.Background(), 0)
	_, hasDeadline := ctx.Deadline()
	assert.False(t, hasDeadline, "0 means no bound of its own")
	cancel()
	ctx, cancel = process.WaitContext(context.Background(), time.Hour)
	defer cancel()
	_, hasDeadline = ctx.Deadline()
	assert.True(t, hasDeadline)
}
