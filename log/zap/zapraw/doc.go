// Package zapraw is controller-runtime's pkg/log/zap with its
// go.uber.org/zap types, for ported code that needs a *zap.Logger:
// NewRaw, RawZapOpts, Encoder, Options.ZapOpts, Options.Encoder and
// Options.NewEncoder, KubeAwareEncoder. It is its own module, so that
// kubeloop itself does not depend on go.uber.org/zap; code that only
// needs a logr.Logger uses kubeloop's log/zap, on log/slog, instead.
//
// kubeloop-migrate imports it, under the file's name for controller-
// runtime's package, in the packages that use a zap-typed name, so the
// calls stay as they were:
//
//	import zap "github.com/kubeloop/kubeloop/log/zap/zapraw"
//
//	opts := zap.Options{Development: true}
//	opts.BindFlags(flag.CommandLine)
//	flag.Parse()
//	logger := zap.NewRaw(zap.UseFlagOptions(&opts)) // a *zap.Logger
//	slog.SetDefault(slog.New(logr.ToSlogHandler(zapr.NewLogger(logger)))) // was ctrl.SetLogger(...)
//
// Guarantees:
//   - The names, signatures, flags and defaults are controller-runtime's
//     (as of v0.25.2): Development means the console encoder on zap's
//     development EncoderConfig, DebugLevel, stack traces from WarnLevel
//     and zap.Development(); otherwise the JSON encoder on zap's
//     production EncoderConfig ("ts", "level", "logger", "msg",
//     "stacktrace"), InfoLevel, stack traces from ErrorLevel and zap's
//     sampler (the first 100 lines a second of one message, then every
//     100th) unless Level shows zapcore.Level(-2). Timestamps are
//     RFC 3339 unless Options.TimeEncoder says otherwise.
//   - The lines are real zap's, so they are byte for byte those of
//     controller-runtime's logger with the same Options; New is
//     zapr.NewLogger(NewRaw(...)), as there.
//   - Outside development, a field whose value is a Kubernetes object is
//     logged as {apiVersion, kind, namespace, name} (KubeAwareEncoder).
//   - NewRaw never changes the Options it is given (UseFlagOptions'
//     Options can build several loggers); all defaults are filled in one
//     place, on a copy.
//   - A bad flag value fails flag parsing with an error that names the
//     flag and the value, and says which values are accepted.
//
// As in controller-runtime, JSONEncoder and ConsoleEncoder build their
// encoder when the option runs, from zap's own EncoderConfig and their
// arguments only: Options.TimeEncoder and EncoderConfigOptions do not
// reach it (JSONEncoder's timestamps are epoch seconds, ConsoleEncoder's
// ISO 8601). kubeloop's log/zap applies them to both; --zap-encoder and
// NewEncoder do get them here too.
package zapraw
