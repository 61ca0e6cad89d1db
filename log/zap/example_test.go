package zap_test

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/go-logr/logr"

	"github.com/kubeloop/kubeloop/log"
	"github.com/kubeloop/kubeloop/log/zap"
)

// fixedClock stands in for a real time encoder so that the examples'
// output does not change from run to run.
func fixedClock(time.Time) slog.Value { return slog.StringValue("2024-05-06T07:08:09Z") }

// The kubebuilder scaffold's cmd/main.go, ported: the flags, then the
// logger as slog's default (what ctrl.SetLogger becomes).
func Example() {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError) // flag.CommandLine in main
	opts := zap.Options{Development: true}
	opts.BindFlags(fs)
	if err := fs.Parse([]string{"--zap-log-level=info", "--zap-stacktrace-level=panic"}); err != nil {
		panic(err)
	}
	opts.DestWriter, opts.TimeEncoder = os.Stdout, fixedClock // for the example

	defer slog.SetDefault(slog.Default()) // for the example
	slog.SetDefault(slog.New(logr.ToSlogHandler(zap.New(zap.UseFlagOptions(&opts)))))
	setupLog := log.Named("setup") // ctrl.Log.WithName("setup")

	setupLog.Info("starting manager", "metrics", ":8080")
	setupLog.V(1).Info("not shown at info")
	setupLog.Error(errors.New("no kind Widget"), "unable to create controller", "controller", "widget")
	// Output:
	// 2024-05-06T07:08:09Z	INFO	setup	starting manager	{"metrics":":8080"}
	// 2024-05-06T07:08:09Z	ERROR	setup	unable to create controller	{"error":"no kind Widget","controller":"widget"}
}

// Production (the zero Options): JSON lines, info and above. Options.Level
// LevelValue(-2) shows logr's V(2) and below.
func ExampleNew() {
	logger := zap.New(
		zap.WriteTo(os.Stdout),
		zap.Level(zap.LevelValue(-2)),
		zap.UseDevMode(false),
		func(o *zap.Options) { o.TimeEncoder = fixedClock },
	)
	logger.Info("reconciled", "name", "web")
	logger.V(2).Info("cache hit")
	logger.V(3).Info("not shown")
	// Output:
	// {"ts":"2024-05-06T07:08:09Z","level":"info","msg":"reconciled","name":"web"}
	// {"ts":"2024-05-06T07:08:09Z","level":"Level(-2)","msg":"cache hit"}
}

// A test suite's logger: development mode into the test's writer
// (GinkgoWriter), JSON for a log processor.
func ExampleWriteTo() {
	logger := zap.New(zap.WriteTo(os.Stdout), zap.UseDevMode(true), zap.JSONEncoder(),
		zap.StacktraceLevel(zap.PanicLevel), func(o *zap.Options) { o.TimeEncoder = fixedClock })
	logger.V(1).Info("debug is on in development")
	// Output:
	// {"ts":"2024-05-06T07:08:09Z","level":"debug","msg":"debug is on in development"}
}

// A bad flag value fails flag parsing with an error that names it.
func ExampleOptions_BindFlags() {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // no usage text
	var opts zap.Options
	opts.BindFlags(fs)
	err := fs.Parse([]string{"--zap-log-level=warn"})
	fmt.Println(err)
	// Output:
	// invalid value "warn" for flag -zap-log-level: invalid log level "warn": want debug, info, error, panic or a verbosity from 1 to 128
}

// NewHandler is the same logger for code that logs through slog.
func ExampleNewHandler() {
	h := zap.NewHandler(zap.WriteTo(os.Stdout), func(o *zap.Options) { o.TimeEncoder = fixedClock })
	slog.New(h).Warn("careful", "retries", 3)
	// Output:
	// {"ts":"2024-05-06T07:08:09Z","level":"warn","msg":"careful","retries":3}
}
