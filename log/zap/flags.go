package zap

import (
	"flag"
	"fmt"
	"strings"
)

// BindFlags defines controller-runtime's logging flags on fs, writing to o
// when fs is parsed:
//
//	--zap-devel               development defaults (console, debug, stack traces at warn);
//	                          false: production (json, info, stack traces at error)
//	--zap-encoder             json or console
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
	fs.Var(flagFunc(func(s string) error {
		switch v := strings.ToLower(s); v {
		case encoderJSON, encoderConsole:
			o.encoder = v
			return nil
		}
		return fmt.Errorf("invalid encoder value %q: want json or console", s)
	}), "zap-encoder", "Zap log encoding (one of 'json' or 'console')")
	fs.Var(flagFunc(func(s string) error {
		l, err := parseLevel(s)
		if err == nil {
			o.Level = l
		}
		return err
	}), "zap-log-level", "Zap Level to configure the verbosity of logging. Can be one of 'debug', 'info', 'error', 'panic'"+
		" or any integer value > 0 which corresponds to custom debug levels of increasing verbosity")
	fs.Var(flagFunc(func(s string) error {
		l, err := parseStacktraceLevel(s)
		if err == nil {
			o.StacktraceLevel = l
		}
		return err
	}), "zap-stacktrace-level", "Zap Level at and above which stacktraces are captured (one of 'info', 'error', 'panic').")
	fs.Var(flagFunc(func(s string) error {
		enc, ok := parseTimeEncoding(strings.ToLower(s))
		if !ok {
			return fmt.Errorf("invalid time-encoding value %q: want epoch, millis, nanos, iso8601, rfc3339 or rfc3339nano", s)
		}
		o.TimeEncoder = enc
		return nil
	}), "zap-time-encoding", "Zap time encoding (one of 'epoch', 'millis', 'nanos', 'iso8601', 'rfc3339' or 'rfc3339nano'). Defaults to 'rfc3339'.")
}

// flagFunc is a flag.Value that hands each value to its func.
type flagFunc func(string) error

var _ flag.Value = flagFunc(nil)

func (f flagFunc) Set(s string) error { return f(s) }
func (f flagFunc) String() string     { return "" }
