package zapraw

import (
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Sampling in production, as controller-runtime samples: per second and
// message, the first samplingFirst lines, then every samplingThereafter-th.
const (
	samplingTick       = time.Second
	samplingFirst      = 100
	samplingThereafter = 100
)

// New returns a logr.Logger over NewRaw(opts...), through go-logr/zapr:
// logger.V(n).Info logs at zapcore.Level(-n) and Error adds the error
// under "error".
func New(opts ...Opts) logr.Logger {
	return zapr.NewLogger(NewRaw(opts...))
}

// NewRaw returns a *zap.Logger configured by opts, applied in order on the
// zero Options and then defaulted (see Options). Its core writes through a
// KubeAwareEncoder over Options.Encoder to Options.DestWriter, which also
// receives zap's own errors.
func NewRaw(opts ...Opts) *zap.Logger {
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	s := o.settle()
	sink := zapcore.AddSync(s.DestWriter)
	enc := &KubeAwareEncoder{Encoder: s.Encoder, Verbose: s.Development}
	zapOpts := append(s.ZapOpts, zap.ErrorOutput(sink))
	return zap.New(zapcore.NewCore(enc, sink, s.Level)).WithOptions(zapOpts...)
}

// settle returns o with every default filled in: the one defaulting site.
// The slices are copied, so the caller's Options (shared through
// UseFlagOptions) never see the defaults.
func (o Options) settle() Options {
	o.ZapOpts = append([]zap.Option(nil), o.ZapOpts...)
	if o.DestWriter == nil {
		o.DestWriter = os.Stderr
	}
	level, stack, newEncoder := zapcore.InfoLevel, zapcore.ErrorLevel, NewEncoderFunc(newJSONEncoder)
	if o.Development {
		level, stack, newEncoder = zapcore.DebugLevel, zapcore.WarnLevel, newConsoleEncoder
	}
	if o.NewEncoder == nil {
		o.NewEncoder = newEncoder
	}
	if o.Level == nil {
		o.Level = zap.NewAtomicLevelAt(level)
	}
	if o.StacktraceLevel == nil {
		o.StacktraceLevel = zap.NewAtomicLevelAt(stack)
	}
	switch {
	case o.Development:
		o.ZapOpts = append(o.ZapOpts, zap.Development())
	case !o.Level.Enabled(zapcore.Level(-2)):
		// Sampling only while no high verbosity is shown, as in
		// controller-runtime (zap's sampler counts levels from -1 up).
		o.ZapOpts = append(o.ZapOpts, zap.WrapCore(func(core zapcore.Core) zapcore.Core {
			return zapcore.NewSamplerWithOptions(core, samplingTick, samplingFirst, samplingThereafter)
		}))
	}
	if o.TimeEncoder == nil {
		o.TimeEncoder = zapcore.RFC3339TimeEncoder
	}
	if o.Encoder == nil {
		timeEncoder := o.TimeEncoder
		configOpts := append([]EncoderConfigOption{func(c *zapcore.EncoderConfig) { c.EncodeTime = timeEncoder }}, o.EncoderConfigOptions...)
		o.Encoder = o.NewEncoder(configOpts...)
	}
	o.ZapOpts = append(o.ZapOpts, zap.AddStacktrace(o.StacktraceLevel))
	return o
}
