package testenv

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
	"k8s.io/client-go/rest"
)

func TestMain(m *testing.M) { Main(m, Options{}) }

// fakeM is a test run that records its call and may start a goroutine.
type fakeM struct {
	code  int
	calls *[]string
	run   func()
}

func (f fakeM) Run() int {
	*f.calls = append(*f.calls, "run")
	if f.run != nil {
		f.run()
	}
	return f.code
}

func TestMainFindsLeakedGoroutines(t *testing.T) {
	var calls []string
	stop := make(chan struct{})
	done := make(chan struct{})
	leak := func() {
		go func() {
			defer close(done)
			<-stop
		}()
	}
	var out strings.Builder
	code := mainCode(fakeM{calls: &calls, run: leak}, Options{}, &out)
	assert.Equal(t, 1, code)
	assert.Contains(t, out.String(), "testenv: goroutines left after the tests")
	assert.Contains(t, out.String(), "TestMainFindsLeakedGoroutines")

	out.Reset()
	code = mainCode(fakeM{calls: &calls}, Options{
		IgnoreLeaks: []goleak.Option{goleak.IgnoreAnyFunction("github.com/kubeloop/kubeloop/internal/testenv.TestMainFindsLeakedGoroutines.func1.1")},
	}, &out)
	assert.Equal(t, 0, code, "ignored: %s", out.String())
	close(stop)
	<-done
}

func TestMainSkipsTheLeakCheckAfterAFailure(t *testing.T) {
	var calls []string
	stop := make(chan struct{})
	done := make(chan struct{})
	var out strings.Builder
	code := mainCode(fakeM{code: 2, calls: &calls, run: func() {
		go func() { defer close(done); <-stop }()
	}}, Options{}, &out)
	assert.Equal(t, 2, code, "the tests' own code")
	assert.Empty(t, out.String(), "no leak report on top of failing tests")
	close(stop)
	<-done
}

var errStopped = errors.New("stopped")

// blocking runs until its context ends.
type blocking struct{}

func (blocking) Start(ctx context.Context) error {
	<-ctx.Done()
	return errStopped
}

func TestStart(t *testing.T) {
	stop := Start(blocking{})
	assert.ErrorIs(t, stop(), errStopped, "Start's result, after cancel")
}

// plane is a fake ControlPlane that records its calls.
type plane struct {
	calls    *[]string
	startErr error
	stopErr  error
	cfg      *rest.Config
}

func (p plane) Start() (*rest.Config, error) {
	*p.calls = append(*p.calls, "start")
	if p.startErr != nil {
		return nil, p.startErr
	}
	return p.cfg, nil
}

func (p plane) Stop() error {
	*p.calls = append(*p.calls, "stop")
	return p.stopErr
}

func TestMainCode(t *testing.T) {
	errBoom := errors.New("boom")
	all := []string{"start", "setup", "run", "teardown", "stop"}
	tests := []struct {
		name      string
		noPlane   bool
		code      int // the tests' own
		plane     plane
		setupErr  error
		teardown  error
		wantCode  int
		wantCalls []string
		wantOut   string
	}{
		{name: "green", wantCalls: all},
		{name: "without a control plane", noPlane: true, wantCalls: []string{"setup", "run", "teardown"}},
		{name: "a test fails", code: 1, wantCode: 1, wantCalls: all},
		{name: "start fails: nothing else runs", plane: plane{startErr: errBoom}, wantCode: 1,
			wantCalls: []string{"start"}, wantOut: "testenv: start the control plane: boom"},
		{name: "setup fails: no tests, teardown still runs", setupErr: errBoom, wantCode: 1,
			wantCalls: []string{"start", "setup", "teardown", "stop"}, wantOut: "testenv: setup: boom"},
		{name: "teardown fails", teardown: errBoom, wantCode: 1, wantCalls: all, wantOut: "testenv: teardown: boom"},
		{name: "stop fails", plane: plane{stopErr: errBoom}, wantCode: 1, wantCalls: all,
			wantOut: "testenv: stop the control plane: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []string
			var out strings.Builder
			var wantCfg *rest.Config
			opts := Options{
				Setup: func(cfg *rest.Config) error {
					assert.Same(t, wantCfg, cfg, "the control plane's admin config, or nil without one")
					calls = append(calls, "setup")
					return tt.setupErr
				},
				Teardown: func() error {
					calls = append(calls, "teardown")
					return tt.teardown
				},
			}
			if !tt.noPlane {
				wantCfg = &rest.Config{Host: "https://127.0.0.1:1"}
				p := tt.plane
				p.calls, p.cfg = &calls, wantCfg
				opts.Env = p
			}
			code := mainCode(fakeM{code: tt.code, calls: &calls}, opts, &out)
			assert.Equal(t, tt.wantCode, code)
			assert.Equal(t, tt.wantCalls, calls)
			if tt.wantOut != "" {
				assert.Contains(t, out.String(), tt.wantOut)
			} else {
				assert.Empty(t, out.String())
			}
		})
	}
}
