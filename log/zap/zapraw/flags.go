package zapraw

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// BindFlags defines controller-runtime's logging flags on fs, writing to o
// when fs is parsed:
//
//	--zap-devel               development defaults (console, debug, stack traces at warn);
//	                          false: production (json, info, stack traces at error)
//	--zap-encoder             json or console (sets NewEncoder)
//	--zap-log-level           debug, info, error, panic, or n > 0 for logr verbosity n
//	--zap-stacktrace-level    info, error or panic
//	--zap-time-encoding       epoch, millis, nanos, iso8601, rfc3339 or rfc3339nano
//
// Values are case-insensitive; a bad value makes fs.Parse fail with an
// error that names the flag and the value.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.Development, "zap-devel", o.Development,
		"Development Mode defaults(encoder=consoleEncoder,logLevel=Debug,stackTraceLevel=Warn). "+
			"Production Mode defaults(encoder=jsonEncoder,logLevel=Info,stackTraceLevel=Error)")
	fs.Var(&flagValue{set: func(s string) error {
		switch strings.ToLower(s) {
		case "json":
			o.NewEncoder = newJSONEncoder
		case "console":
			o.NewEncoder = newConsoleEncoder
		default:
			return fmt.Errorf("invalid encoder value %q: want json or console", s)
		}
		return nil
	}}, "zap-encoder", "Zap log encoding (one of 'json' or 'console')")
	fs.Var(&flagValue{set: func(s string) error {
		l, err := parseLevel(s)
		if err == nil {
			o.Level = zap.NewAtomicLevelAt(l)
		}
		return err
	}}, "zap-log-level", "Zap Level to configure the verbosity of logging. Can be one of 'debug', 'info', 'error', 'panic'"+
		" or any integer value > 0 which corresponds to custom debug levels of increasing verbosity")
	fs.Var(&flagValue{set: func(s string) error {
		l, ok := flagLevels[strings.ToLower(s)]
		if !ok || l == zapcore.DebugLevel {
			return fmt.Errorf("invalid stacktrace level %q: want info, error or panic", s)
		}
		o.StacktraceLevel = zap.NewAtomicLevelAt(l)
		return nil
	}}, "zap-stacktrace-level", "Zap Level at and above which stacktraces are captured (one of 'info', 'error', 'panic').")
	fs.Var(&flagValue{set: func(s string) error {
		enc, ok := timeEncodings[strings.ToLower(s)]
		if !ok {
			return fmt.Errorf("invalid time-encoding value %q: want epoch, millis, nanos, iso8601, rfc3339 or rfc3339nano", s)
		}
		o.TimeEncoder = enc
		return nil
	}}, "zap-time-encoding", "Zap time encoding (one of 'epoch', 'millis', 'nanos', 'iso8601', 'rfc3339' or 'rfc3339nano'). Defaults to 'rfc3339'.")
}

// flagLevels are the names --zap-log-level takes; --zap-stacktrace-level
// takes them but debug.
var flagLevels = map[string]zapcore.Level{
	"debug": zapcore.DebugLevel, "info": zapcore.InfoLevel, "error": zapcore.ErrorLevel, "panic": zapcore.PanicLevel,
}

// timeEncodings are the values of --zap-time-encoding ("nano" too, the
// name controller-runtime's help text gives).
var timeEncodings = map[string]zapcore.TimeEncoder{
	"rfc3339nano": zapcore.RFC3339NanoTimeEncoder, "rfc3339": zapcore.RFC3339TimeEncoder,
	"iso8601": zapcore.ISO8601TimeEncoder, "millis": zapcore.EpochMillisTimeEncoder,
	"nanos": zapcore.EpochNanosTimeEncoder, "nano": zapcore.EpochNanosTimeEncoder, "epoch": zapcore.EpochTimeEncoder,
}

// parseLevel reads --zap-log-level: a name, or an integer n > 0 meaning
// verbosity n (zapcore.Level(-n)); zap's levels are int8, so n is at most
// 128.
func parseLevel(s string) (zapcore.Level, error) {
	if l, ok := flagLevels[strings.ToLower(s)]; ok {
		return l, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 128 {
		return 0, fmt.Errorf("invalid log level %q: want debug, info, error, panic or a verbosity from 1 to 128", s)
	}
	return zapcore.Level(-n), nil
}

// flagValue is a flag.Value that hands each value to set and shows the
// last one accepted.
type flagValue struct {
	set   func(string) error
	value string
}

var _ flag.Value = (*flagValue)(nil)

// Set hands s to set and keeps it when accepted.
func (f *flagValue) Set(s string) error {
	if err := f.set(s); err != nil {
		return err
	}
	f.value = s
	return nil
}

// String is the last value accepted.
func (f *flagValue) String() string { return f.value }
