package log_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"

	"github.com/kubeloop/kubeloop/log"
)

// A reconciler reads the logger the controller put in its context.
func ExampleFromContext() {
	stdout := funcr.New(func(prefix, args string) { fmt.Println(prefix, args) }, funcr.Options{})
	// The controller does this for every Reconcile, with the controller
	// name, the request's namespace and name and the reconcile ID.
	ctx := log.IntoContext(context.Background(), stdout.WithName("guestbook").WithValues("name", "web"))

	log.FromContext(ctx).Info("reconciled", "replicas", 3)
	// Output: guestbook "level"=0 "msg"="reconciled" "name"="web" "replicas"=3
}

// setupLog is ctrl.Log.WithName("setup") ported: it may be created before
// main has chosen where logs go.
var setupLog = log.Named("setup")

// One logger for everything: slog's default (what log.Named, log.Default
// and a context without a logger use) and the manager's
// (manager.Options{Logger: logger}).
func ExampleNamed() {
	defer slog.SetDefault(slog.Default())

	logger := funcr.New(func(prefix, args string) { fmt.Println(prefix, args) }, funcr.Options{})
	slog.SetDefault(slog.New(logr.ToSlogHandler(logger)))
	// mgr, err := manager.New(cfg, manager.Options{Logger: logger})

	setupLog.Info("starting manager")
	// Output: setup "level"=0 "msg"="starting manager"
}

// klog's logr.Logger (k8s.io/klog/v2), so that kubeloop's lines and
// client-go's share klog's flags (-v, -logtostderr) and output. Zap is
// wired the same way through zapr.NewLogger (see the package doc).
func ExampleNamed_klog() {
	defer slog.SetDefault(slog.Default())

	logger := klog.NewKlogr()
	slog.SetDefault(slog.New(logr.ToSlogHandler(logger)))
	// mgr, err := manager.New(cfg, manager.Options{Logger: logger})

	log.Named("setup").Info("starting manager") // written by klog to stderr
	klog.Flush()
}

// The API server's warnings (deprecated APIs, unknown fields) logged once
// each, as controller-runtime's test suites set them up.
func ExampleNewKubeAPIWarningLogger() {
	stdout := funcr.New(func(prefix, args string) { fmt.Println(prefix, args) }, funcr.Options{})
	ctx := log.IntoContext(context.Background(), stdout.WithName("warnings"))

	h := log.NewKubeAPIWarningLogger(log.KubeAPIWarningLoggerOptions{Deduplicate: true})
	// cfg.WarningHandler = h (client-go passes each request's context)
	h.HandleWarningHeaderWithContext(ctx, 299, "", "v1beta1 Widget is deprecated")
	h.HandleWarningHeaderWithContext(ctx, 299, "", "v1beta1 Widget is deprecated")
	// Output: warnings "level"=0 "msg"="v1beta1 Widget is deprecated"
}
