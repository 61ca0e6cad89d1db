// Package zap is controller-runtime's pkg/log/zap for ported code: the
// same Options, flags and calls, built on log/slog instead of
// go.uber.org/zap, returning a logr.Logger. The kubebuilder scaffold's
// main.go and suite_test.go keep working after an import-path change:
//
//	opts := zap.Options{Development: true}
//	opts.BindFlags(flag.CommandLine)
//	flag.Parse()
//	logger := zap.New(zap.UseFlagOptions(&opts))
//	slog.SetDefault(slog.New(logr.ToSlogHandler(logger))) // was ctrl.SetLogger(logger)
//
//	logger := zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true))
//
// Levels are numbered as zapcore's (LevelValue; zapcore.InfoLevel is
// InfoLevel here, zapcore.Level(-2) is LevelValue(-2)); so are the time
// encoders (ISO8601TimeEncoder, ...).
//
// Guarantees:
//   - The output is controller-runtime's in shape. JSON (production): one
//     object a line with "ts", "level" ("info", "debug", "Level(-2)"),
//     "msg", "logger" (names joined with "."), "error" for logr's error,
//     the fields, and "stacktrace". Console (development): timestamp,
//     LEVEL, logger name and message separated by tabs, then the fields
//     as JSON, then the stack trace on the lines after.
//   - Defaults and flags are controller-runtime's: Development means the
//     console, DebugLevel and stack traces from WarnLevel; otherwise JSON,
//     InfoLevel and stack traces from ErrorLevel; timestamps RFC 3339.
//     --zap-log-level n (n > 0) shows logr's V(0) to V(n). A bad flag
//     value fails flag parsing, naming the flag and the value.
//   - logger.V(n).Info logs at LevelValue(-n): V(1) is DebugLevel, shown
//     in development and hidden at InfoLevel. Through slog, Warn is
//     WarnLevel and slog.LevelDebug is V(4), as logr maps slog's levels.
//   - Outside development, a field whose value has Kubernetes metadata
//     (GetName, GetNamespace) is logged as {apiVersion, kind, namespace,
//     name}, as controller-runtime's KubeAwareEncoder does.
//   - Each line is one Write to Options.DestWriter.
//
// EncoderConfigOptions and the options of JSONEncoder and ConsoleEncoder
// are controller-runtime's func(*zapcore.EncoderConfig) values: they set
// the keys and the time, level and name encoders (EncoderConfigOption
// says which fields are read), without this package importing
// go.uber.org/zap. ZapOpts are accepted and not applied.
//
// Not here: zap's sampling in production (every line is written), zap's
// Encoder, NewEncoder and RawZapOpts (they take go.uber.org/zap types),
// and caller annotations.
package zap
