package testenv

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	"k8s.io/client-go/rest"
)

// Options configures Main. The zero value runs the tests without a
// control plane and checks for leaks.
type Options struct {
	// Env is the control plane started before the tests and stopped after
	// them, normally an *envtest.Environment whose fields
	// (CRDDirectoryPaths, Authorization, APIServerFlags, ...) configure it;
	// nil means no control plane.
	Env ControlPlane
	// Setup runs once the control plane is ready, with its admin config
	// (nil without Env), before the tests; nil means nothing to set up.
	Setup func(cfg *rest.Config) error
	// Teardown runs after the tests, and after a failed Setup, before the
	// control plane stops; nil means nothing to tear down.
	Teardown func() error
	// IgnoreLeaks are goroutines of this package that outlive its tests by
	// design, ignored besides SharedLeakIgnores; nil means none.
	IgnoreLeaks []goleak.Option
}

// ControlPlane is what Options.Env starts; *envtest.Environment is one.
type ControlPlane interface {
	// Start starts the control plane and returns its admin config.
	Start() (*rest.Config, error)
	// Stop stops it and removes what Start created.
	Stop() error
}

// M is what Main runs; *testing.M is one.
type M interface {
	Run() int
}

// SharedLeakIgnores returns the goroutines every leak check ignores: the
// read and write loops of idle persistent HTTP/1 and HTTP/2 client
// connections, which client-go's transport cache keeps for the life of the
// process, and klog's flush daemon.
func SharedLeakIgnores() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*clientConnReadLoop).run"),
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	}
}

// Main runs m as opts says and exits with its result; see the package
// documentation.
func Main(m M, opts Options) {
	os.Exit(mainCode(m, opts, os.Stderr))
}

// mainCode is Main without the exit: it returns the exit code and writes
// what went wrong to w.
func mainCode(m M, opts Options, w io.Writer) int {
	code := run(m, opts, w)
	if code != 0 {
		return code
	}
	if err := goleak.Find(append(SharedLeakIgnores(), opts.IgnoreLeaks...)...); err != nil {
		fmt.Fprintln(w, "testenv: goroutines left after the tests:", err)
		return 1
	}
	return 0
}

func run(m M, opts Options, w io.Writer) (code int) {
	var cfg *rest.Config
	if opts.Env != nil {
		var err error
		if cfg, err = opts.Env.Start(); err != nil {
			fmt.Fprintln(w, "testenv: start the control plane:", err)
			return 1
		}
		defer func() {
			if err := opts.Env.Stop(); err != nil {
				fmt.Fprintln(w, "testenv: stop the control plane:", err)
				code = 1
			}
		}()
	}
	if opts.Teardown != nil {
		defer func() {
			if err := opts.Teardown(); err != nil {
				fmt.Fprintln(w, "testenv: teardown:", err)
				code = 1
			}
		}()
	}
	if opts.Setup != nil {
		if err := opts.Setup(cfg); err != nil {
			fmt.Fprintln(w, "testenv: setup:", err)
			return 1
		}
	}
	return m.Run()
}

// Runnable is what Start runs: a manager, a cache, a server.
type Runnable interface {
	Start(ctx context.Context) error
}

// Start runs r in the background and returns a function that cancels it
// and returns what its Start returned.
func Start(r Runnable) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Start(ctx) }()
	return func() error {
		cancel()
		return <-done
	}
}

// Logger logs warnings and errors only, to stderr, so test output stays
// readable.
func Logger() logr.Logger {
	return logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
