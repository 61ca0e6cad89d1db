package log

import (
	"context"

	"github.com/go-logr/logr"
)

// FromContext returns the logger in ctx, with keysAndValues added. In a
// Reconcile that is the reconcile logger, which carries the controller,
// the request's namespace and name and the reconcile ID. Without a logger
// in ctx (or with a nil ctx) it returns Default().
func FromContext(ctx context.Context, keysAndValues ...any) logr.Logger {
	l := Default()
	if ctx != nil {
		if fromCtx, err := logr.FromContext(ctx); err == nil {
			l = fromCtx
		}
	}
	if len(keysAndValues) > 0 {
		l = l.WithValues(keysAndValues...)
	}
	return l
}

// IntoContext returns a copy of ctx that carries logger, for FromContext
// further down.
func IntoContext(ctx context.Context, logger logr.Logger) context.Context {
	return logr.NewContext(ctx, logger)
}

// Default returns a logger that writes through log/slog's default handler
// as it is when each line is logged (see the package doc). It is what
// kubeloop's options mean by a zero Logger.
func Default() logr.Logger {
	return logr.New(&slogDefaultSink{})
}

// Named returns Default().WithName(name): a package or component logger,
// safe to create in a package-level var before main configures slog.
func Named(name string) logr.Logger {
	return Default().WithName(name)
}
