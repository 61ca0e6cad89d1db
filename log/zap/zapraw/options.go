package zapraw

import (
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// EncoderConfigOption changes the zapcore.EncoderConfig an encoder is
// built from (keys, time, level and name encoders, ...).
type EncoderConfigOption func(*zapcore.EncoderConfig)

// NewEncoderFunc builds the encoder from the EncoderConfigOptions:
// JSON's or the console's, as --zap-encoder chooses.
type NewEncoderFunc func(...EncoderConfigOption) zapcore.Encoder

// Options configures NewRaw and New. The zero value is controller-runtime's
// production logger: JSON to standard error, info and above, stack traces
// on errors, RFC 3339 timestamps, sampling.
type Options struct {
	// Development selects the development defaults: the console encoder,
	// DebugLevel, stack traces from WarnLevel, zap.Development() (DPanic
	// panics) and no sampling. False: JSON, InfoLevel, stack traces from
	// ErrorLevel and, unless Level enables zapcore.Level(-2), zap's
	// sampler (per second and message, the first 100 lines, then every
	// 100th). Development also logs Kubernetes objects in full
	// (KubeAwareEncoder.Verbose).
	Development bool
	// Encoder writes the lines. nil means NewEncoder(EncoderConfigOptions...).
	// When set, EncoderConfigOptions, NewEncoder and TimeEncoder are not
	// used: the encoder is taken as it is.
	Encoder zapcore.Encoder
	// EncoderConfigOptions change the encoder configuration NewEncoder
	// starts from, in order, after TimeEncoder is set on it (an
	// EncodeTime set here wins). Not used when Encoder is set.
	EncoderConfigOptions []EncoderConfigOption
	// NewEncoder builds Encoder; nil means the console encoder on zap's
	// development EncoderConfig in development, the JSON encoder on zap's
	// production EncoderConfig otherwise. --zap-encoder sets it. Not used
	// when Encoder is set.
	NewEncoder NewEncoderFunc
	// DestWriter receives the lines and zap's own errors; nil means
	// os.Stderr.
	DestWriter io.Writer
	// Level is the lowest level logged; nil means DebugLevel in development
	// and InfoLevel otherwise. zapcore.Level(-n) shows logr's V(n) and
	// below.
	Level zapcore.LevelEnabler
	// StacktraceLevel is the lowest level whose lines carry a stack trace;
	// nil means WarnLevel in development and ErrorLevel otherwise.
	StacktraceLevel zapcore.LevelEnabler
	// ZapOpts are applied to the logger after the defaults' own options
	// (zap.AddCaller(), zap.Fields(...), zap.Hooks(...)).
	ZapOpts []zap.Option
	// TimeEncoder renders the timestamp; nil means
	// zapcore.RFC3339TimeEncoder. Not used when Encoder is set.
	TimeEncoder zapcore.TimeEncoder
}

// Opts changes Options, for NewRaw and New.
type Opts func(*Options)

// UseFlagOptions makes the logger use in, typically filled by BindFlags and
// flag.Parse. It replaces every setting, so options given before it are
// lost and options after it apply on top.
func UseFlagOptions(in *Options) Opts {
	return func(o *Options) { *o = *in }
}

// UseDevMode sets Options.Development.
func UseDevMode(enabled bool) Opts {
	return func(o *Options) { o.Development = enabled }
}

// WriteTo sets Options.DestWriter (GinkgoWriter in a test suite).
func WriteTo(out io.Writer) Opts {
	return func(o *Options) { o.DestWriter = out }
}

// Encoder sets Options.Encoder: the lines are written by encoder as it is.
func Encoder(encoder zapcore.Encoder) func(o *Options) {
	return func(o *Options) { o.Encoder = encoder }
}

// JSONEncoder sets Options.Encoder to zap's JSON encoder on zap's
// production EncoderConfig changed by opts. As in controller-runtime, the
// encoder is built here: Options.TimeEncoder and EncoderConfigOptions do
// not reach it, and its timestamps are epoch seconds unless opts set
// EncodeTime.
func JSONEncoder(opts ...EncoderConfigOption) func(o *Options) {
	return func(o *Options) { o.Encoder = newJSONEncoder(opts...) }
}

// ConsoleEncoder sets Options.Encoder to zap's console encoder on zap's
// development EncoderConfig changed by opts (ISO 8601 timestamps unless
// opts set EncodeTime), as JSONEncoder does for JSON.
func ConsoleEncoder(opts ...EncoderConfigOption) func(o *Options) {
	return func(o *Options) { o.Encoder = newConsoleEncoder(opts...) }
}

// Level sets Options.Level: the lowest level logged. zapcore.Level(-3)
// shows logr's V(3) and below.
func Level(level zapcore.LevelEnabler) func(o *Options) {
	return func(o *Options) { o.Level = level }
}

// StacktraceLevel sets Options.StacktraceLevel: the lowest level whose
// lines carry a stack trace.
func StacktraceLevel(stacktraceLevel zapcore.LevelEnabler) func(o *Options) {
	return func(o *Options) { o.StacktraceLevel = stacktraceLevel }
}

// RawZapOpts appends zapOpts to Options.ZapOpts.
func RawZapOpts(zapOpts ...zap.Option) func(o *Options) {
	return func(o *Options) { o.ZapOpts = append(o.ZapOpts, zapOpts...) }
}

// newJSONEncoder is the JSON encoder on zap's production configuration.
func newJSONEncoder(opts ...EncoderConfigOption) zapcore.Encoder {
	cfg := zap.NewProductionEncoderConfig()
	for _, opt := range opts {
		opt(&cfg)
	}
	return zapcore.NewJSONEncoder(cfg)
}

// newConsoleEncoder is the console encoder on zap's development
// configuration.
func newConsoleEncoder(opts ...EncoderConfigOption) zapcore.Encoder {
	cfg := zap.NewDevelopmentEncoderConfig()
	for _, opt := range opts {
		opt(&cfg)
	}
	return zapcore.NewConsoleEncoder(cfg)
}

var (
	_ NewEncoderFunc = newJSONEncoder
	_ NewEncoderFunc = newConsoleEncoder
)
