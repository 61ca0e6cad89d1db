package zapraw_test

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/log/zap/zapraw"
)

// fixedClock stands in for a real time encoder so that the examples'
// output does not change from run to run.
func fixedClock(_ time.Time, enc zapcore.PrimitiveArrayEncoder) {
	enc.AppendString("2024-05-06T07:08:09Z")
}

// The kubebuilder scaffold's cmd/main.go as an operator with its own
// *zap.Logger has it (clickhouse-operator's): the flags, NewRaw, and a
// logr.Logger over the same logger for the library.
func Example() {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError) // flag.CommandLine in main
	opts := zapraw.Options{Development: true}
	opts.BindFlags(fs)
	if err := fs.Parse([]string{"--zap-log-level=info", "--zap-stacktrace-level=panic"}); err != nil {
		panic(err)
	}
	opts.DestWriter, opts.TimeEncoder = os.Stdout, fixedClock // for the example

	logger := zapraw.NewRaw(zapraw.UseFlagOptions(&opts)) // a *zap.Logger
	setupLog := zapr.NewLogger(logger).WithName("setup")  // what ctrl.SetLogger was given

	logger.Info("operator's own line", zap.String("version", "1.2.3"))
	setupLog.Info("starting manager", "metrics", ":8080")
	setupLog.V(1).Info("not shown at info")
	setupLog.Error(errors.New("no kind Widget"), "unable to create controller", "controller", "widget")
	// Output:
	// 2024-05-06T07:08:09Z	INFO	operator's own line	{"version": "1.2.3"}
	// 2024-05-06T07:08:09Z	INFO	setup	starting manager	{"metrics": ":8080"}
	// 2024-05-06T07:08:09Z	ERROR	setup	unable to create controller	{"controller": "widget", "error": "no kind Widget"}
}

// Production (the zero Options): JSON lines, info and above, Kubernetes
// objects as references. zapcore.Level(-2) shows logr's V(2).
func ExampleNewRaw() {
	logger := zapraw.NewRaw(
		zapraw.WriteTo(os.Stdout),
		zapraw.Level(zapcore.Level(-2)),
		func(o *zapraw.Options) { o.TimeEncoder = fixedClock },
	)
	obj := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
	}
	logger.Info("reconciled", zap.Any("object", obj))
	logger.Check(zapcore.Level(-2), "cache hit").Write()
	// Output:
	// {"level":"info","ts":"2024-05-06T07:08:09Z","msg":"reconciled","object":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"shop","name":"web"}}
	// {"level":"Level(-2)","ts":"2024-05-06T07:08:09Z","msg":"cache hit"}
}

// RawZapOpts hands options to zap itself: a field on every line.
func ExampleRawZapOpts() {
	logger := zapraw.New(
		zapraw.WriteTo(os.Stdout),
		zapraw.RawZapOpts(zap.Fields(zap.String("operator", "clickhouse"))),
		func(o *zapraw.Options) { o.TimeEncoder = fixedClock },
	)
	logger.Info("ready")
	// Output:
	// {"level":"info","ts":"2024-05-06T07:08:09Z","msg":"ready","operator":"clickhouse"}
}

// A bad flag value fails flag parsing with an error that names it.
func ExampleOptions_BindFlags() {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // no usage text
	var opts zapraw.Options
	opts.BindFlags(fs)
	err := fs.Parse([]string{"--zap-log-level=warn"})
	fmt.Println(err)
	// Output:
	// invalid value "warn" for flag -zap-log-level: invalid log level "warn": want debug, info, error, panic or a verbosity from 1 to 128
}
