// Package testenv is the examples' shared TestMain: it starts a local
// control plane, lets the example set itself up, runs the tests, tears
// everything down and checks that no goroutine was left behind.
package testenv

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/manager"
)

// Main starts env, calls setup with its config, runs the tests, calls the
// teardown setup returned (it may be nil), stops env and exits. After a
// green run it fails if goroutines are left, once the control plane (and
// with it every connection to it) is gone.
func Main(m *testing.M, env *envtest.Environment, setup func(cfg *rest.Config) (teardown func() error, err error)) {
	code := run(m, env, setup)
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

func run(m *testing.M, env *envtest.Environment, setup func(*rest.Config) (func() error, error)) int {
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	teardown, err := setup(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		return 1
	}
	code := m.Run()
	if teardown != nil {
		if err := teardown(); err != nil {
			fmt.Fprintln(os.Stderr, "teardown:", err)
			code = 1
		}
	}
	return code
}

// Start runs mgr in the background and returns a function that stops it
// and returns what Start returned.
func Start(mgr *manager.Manager) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() error {
		cancel()
		return <-done
	}
}

// Logger logs warnings and errors only, so test output stays readable.
func Logger() logr.Logger {
	return logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
