package zap

import (
	"io"
	"log/slog"
	"os"

	"github.com/go-logr/logr"
)

// The encoders: Options' encoder, set by JSONEncoder, ConsoleEncoder and
// --zap-encoder.
const (
	encoderJSON    = "json"
	encoderConsole = "console"
)

// Options configures New. The zero value is controller-runtime's
// production logger: JSON to standard error, info and above, stack traces
// on errors, RFC 3339 timestamps.
type Options struct {
	// Development selects the development defaults: the console encoder,
	// DebugLevel and stack traces from WarnLevel. False: JSON, InfoLevel
	// and stack traces from ErrorLevel. Development also logs Kubernetes
	// objects in full, where production logs only their apiVersion, kind,
	// namespace and name.
	Development bool
	// DestWriter receives the lines; nil means os.Stderr. Each line is
	// one Write.
	DestWriter io.Writer
	// Level is the lowest level logged; nil means DebugLevel in
	// development and InfoLevel otherwise. LevelValue(-n) shows logr's
	// V(n) and below.
	Level LevelEnabler
	// StacktraceLevel is the lowest level whose lines carry a "stacktrace"
	// field; nil means WarnLevel in development and ErrorLevel otherwise.
	StacktraceLevel LevelEnabler
	// TimeEncoder renders the "ts" field; nil means RFC3339TimeEncoder.
	// An EncodeTime set by EncoderConfigOptions wins.
	TimeEncoder TimeEncoder
	// EncoderConfigOptions change zap's encoder configuration: the keys
	// and the time, level and name encoders (see EncoderConfigOption).
	// They run in order, before the options given to JSONEncoder or
	// ConsoleEncoder.
	EncoderConfigOptions []EncoderConfigOption
	// ZapOpts are go.uber.org/zap Options (zap.AddCaller(), ...): accepted,
	// not applied (see ZapOption).
	ZapOpts []ZapOption

	encoder     string                // encoderJSON, encoderConsole, or "": by Development
	encoderOpts []EncoderConfigOption // given to JSONEncoder or ConsoleEncoder
}

// Opts changes Options, for New.
type Opts func(*Options)

// UseFlagOptions makes New use in, typically filled by BindFlags and
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

// Level sets Options.Level: the lowest level logged.
func Level(level LevelEnabler) Opts {
	return func(o *Options) { o.Level = level }
}

// StacktraceLevel sets Options.StacktraceLevel: the lowest level whose
// lines carry a stack trace.
func StacktraceLevel(level LevelEnabler) Opts {
	return func(o *Options) { o.StacktraceLevel = level }
}

// JSONEncoder makes New write one JSON object a line, whatever
// Development says. opts change the encoder's configuration after
// Options.EncoderConfigOptions (see EncoderConfigOption).
func JSONEncoder(opts ...EncoderConfigOption) Opts {
	return func(o *Options) { o.encoder, o.encoderOpts = encoderJSON, opts }
}

// ConsoleEncoder makes New write zap's console lines (timestamp, level,
// logger name, message and the fields as JSON, separated by tabs),
// whatever Development says. opts are as for JSONEncoder: a
// zapcore.CapitalColorLevelEncoder colours the level, for example.
func ConsoleEncoder(opts ...EncoderConfigOption) Opts {
	return func(o *Options) { o.encoder, o.encoderOpts = encoderConsole, opts }
}

// New returns a logr.Logger configured by opts, applied in order on the
// zero Options. Its sink is logr's slog sink over this package's
// handler, so logr.ToSlogHandler(New(...)) is that handler again and
// slog.SetDefault(slog.New(logr.ToSlogHandler(l))) sends slog's lines
// the same way.
func New(opts ...Opts) logr.Logger {
	return logr.FromSlogHandler(NewHandler(opts...))
}

// NewHandler returns the slog.Handler that New's logger writes through.
func NewHandler(opts ...Opts) slog.Handler {
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	c := &config{out: o.DestWriter, level: o.Level, stack: o.StacktraceLevel, time: o.TimeEncoder, verbose: o.Development}
	if c.out == nil {
		c.out = os.Stderr
	}
	if c.level == nil {
		c.level = InfoLevel
		if o.Development {
			c.level = DebugLevel
		}
	}
	if c.stack == nil {
		c.stack = ErrorLevel
		if o.Development {
			c.stack = WarnLevel
		}
	}
	if c.time == nil {
		c.time = RFC3339TimeEncoder
	}
	c.enc = defaultEncoding()
	c.enc.apply(append(append([]EncoderConfigOption(nil), o.EncoderConfigOptions...), o.encoderOpts...))
	if c.enc.time != nil {
		c.time = c.enc.time
	}
	c.console = o.encoder == encoderConsole || (o.encoder == "" && o.Development)
	return newHandler(c)
}
