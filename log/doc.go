// Package log hands out logr.Loggers without global state of its own: the
// reconcile logger that a controller puts in each Reconcile's context, and
// named loggers for code that runs outside a reconcile (main's setup, a
// package's helpers). It is controller-runtime's pkg/log under the same
// names where they mean the same thing:
//
//	log.FromContext(ctx)              // in Reconcile: the reconcile logger (below)
//	log.IntoContext(ctx, logger)      // hand a logger down
//	setupLog := log.Named("setup")    // ctrl.Log.WithName("setup")
//
// The reconcile logger has controller-runtime's keys, in its order. A
// controller made by controller/builder For a kind (or with
// controller.Options.ForKind) logs
//
//	controller, controllerGroup, controllerKind,
//	"<Kind>": {"name": ..., "namespace": ...}, namespace, name, reconcileID
//
// where "<Kind>" is the kind's name ("Widget") and its value a
// klog.ObjectRef (its namespace left out for a cluster-scoped object); the
// group of a core kind is "". A controller made by hand without a kind
// logs controller, "object": {"name", "namespace"}, namespace, name and
// reconcileID, as controller-runtime's controller.New does. A Request of
// a fleet cluster (reconcile.Request.Cluster) adds "cluster" before
// reconcileID. The controller's own lines (starting, stopping) carry the
// first three keys.
//
// There is no SetLogger. A program chooses its logger in two places, both
// ordinary Go: manager.Options.Logger (the manager's, its controllers',
// cache's and webhooks'; the zero value writes through log/slog's default
// handler) and, for everything this package hands out, the standard
// library's slog.SetDefault. To send both to one logr.Logger:
//
//	logger := klog.NewKlogr()          // or zapr.NewLogger(zapLogger), funcr, ...
//	slog.SetDefault(slog.New(logr.ToSlogHandler(logger)))
//	mgr, err := manager.New(cfg, manager.Options{Logger: logger})
//
// Zap through zapr (github.com/go-logr/zapr, a module kubeloop does not
// depend on; add it to your own go.mod):
//
//	zapLog, err := zap.NewProduction()          // or zap.NewDevelopment()
//	logger := zapr.NewLogger(zapLog)
//	slog.SetDefault(slog.New(logr.ToSlogHandler(logger)))
//	mgr, err := manager.New(cfg, manager.Options{Logger: logger})
//
// controller-runtime's pkg/log/zap (zap.New(zap.UseFlagOptions(&opts)))
// also returns a logr.Logger and can be wired the same way while a port is
// under way.
//
// Guarantees:
//   - Default and Named resolve slog's default handler when a line is
//     logged, not when the logger is made: a package-level
//     log.Named("setup") follows a slog.SetDefault that main calls later,
//     as ctrl.Log followed ctrl.SetLogger. The handler is looked up again
//     only when slog's default changes.
//   - FromContext never fails: without a logger in the context it returns
//     Default(), so helpers called from tests or from main still log.
//   - Call sites are reported where the caller logs (logr call depth is
//     kept through the lazy sink).
package log
