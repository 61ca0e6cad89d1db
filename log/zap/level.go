package zap

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// LevelValue is a log level numbered as zapcore.Level is: DebugLevel -1
// up to FatalLevel 5. A value below DebugLevel is a logr verbosity:
// LevelValue(-n) is what logger.V(n).Info logs at, so LevelValue(-3) as
// Options.Level shows V(0) to V(3) and hides V(4).
type LevelValue int8

// The levels, with zapcore's names and numbers. logr's Info is InfoLevel,
// its V(1).Info DebugLevel and its Error ErrorLevel; slog's Warn is
// WarnLevel. Nothing logs at DPanicLevel or above through a logr.Logger,
// so a Level of PanicLevel shows nothing.
const (
	DebugLevel  LevelValue = -1
	InfoLevel   LevelValue = 0
	WarnLevel   LevelValue = 1
	ErrorLevel  LevelValue = 2
	DPanicLevel LevelValue = 3
	PanicLevel  LevelValue = 4
	FatalLevel  LevelValue = 5
)

// LevelEnabler decides whether a line at a level is logged (Options.Level)
// or gets a stack trace (Options.StacktraceLevel), as zapcore.LevelEnabler.
type LevelEnabler interface {
	Enabled(LevelValue) bool
}

var _ LevelEnabler = LevelValue(0)

// Enabled reports whether l is at or above v: the levels a minimum of v
// lets through.
func (v LevelValue) Enabled(l LevelValue) bool { return l >= v }

var levelNames = map[LevelValue]string{
	DebugLevel: "debug", InfoLevel: "info", WarnLevel: "warn", ErrorLevel: "error",
	DPanicLevel: "dpanic", PanicLevel: "panic", FatalLevel: "fatal",
}

// String is the level's lower-case name as zap writes it in JSON ("info",
// "debug"), or "Level(-2)" for a verbosity below debug.
func (v LevelValue) String() string {
	if s, ok := levelNames[v]; ok {
		return s
	}
	return fmt.Sprintf("Level(%d)", int8(v))
}

// capitalString is the level as zap's console encoder writes it.
func (v LevelValue) capitalString() string { return strings.ToUpper(v.String()) }

// fromSlog returns the zap level of a slog level. logr logs V(n).Info at
// slog.Level(-n) and Error at slog.LevelError; slog's own levels map to
// their namesakes, and slog.LevelDebug (-4) is V(4), as logr maps it.
func fromSlog(l slog.Level) LevelValue {
	switch {
	case l >= slog.LevelError:
		return ErrorLevel
	case l >= slog.LevelWarn:
		return WarnLevel
	case l >= slog.LevelInfo:
		return InfoLevel
	case l < -128:
		return LevelValue(-128)
	}
	return LevelValue(l)
}

// flagLevels are the names --zap-log-level takes; --zap-stacktrace-level
// takes them but debug.
var flagLevels = map[string]LevelValue{"debug": DebugLevel, "info": InfoLevel, "error": ErrorLevel, "panic": PanicLevel}

// parseLevel reads --zap-log-level: debug, info, error, panic, or an
// integer n > 0 meaning verbosity n (LevelValue(-n)).
func parseLevel(s string) (LevelValue, error) {
	if l, ok := flagLevels[strings.ToLower(s)]; ok {
		return l, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 128 {
		return 0, fmt.Errorf("invalid log level %q: want debug, info, error, panic or a verbosity from 1 to 128", s)
	}
	return LevelValue(-n), nil
}

// parseStacktraceLevel reads --zap-stacktrace-level: info, error or panic.
func parseStacktraceLevel(s string) (LevelValue, error) {
	if l, ok := flagLevels[strings.ToLower(s)]; ok && l != DebugLevel {
		return l, nil
	}
	return 0, fmt.Errorf("invalid stacktrace level %q: want info, error or panic", s)
}
