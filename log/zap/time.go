package zap

import (
	"log/slog"
	"time"
)

// TimeEncoder renders a line's timestamp (the "ts" field), as
// zapcore.TimeEncoder does: a string or a number.
type TimeEncoder func(time.Time) slog.Value

// The time encoders of zapcore under their names. Options.TimeEncoder nil
// means RFC3339TimeEncoder, as in controller-runtime.
var (
	// ISO8601TimeEncoder: "2006-01-02T15:04:05.000Z0700", milliseconds.
	ISO8601TimeEncoder TimeEncoder = TimeEncoderOfLayout("2006-01-02T15:04:05.000Z0700")
	// RFC3339TimeEncoder: "2006-01-02T15:04:05Z07:00", seconds.
	RFC3339TimeEncoder TimeEncoder = TimeEncoderOfLayout(time.RFC3339)
	// RFC3339NanoTimeEncoder: time.RFC3339Nano, trailing zeros dropped.
	RFC3339NanoTimeEncoder TimeEncoder = TimeEncoderOfLayout(time.RFC3339Nano)
	// EpochTimeEncoder: seconds since the Unix epoch, a float.
	EpochTimeEncoder TimeEncoder = func(t time.Time) slog.Value {
		return slog.Float64Value(float64(t.UnixNano()) / float64(time.Second))
	}
	// EpochMillisTimeEncoder: milliseconds since the Unix epoch, a float.
	EpochMillisTimeEncoder TimeEncoder = func(t time.Time) slog.Value {
		return slog.Float64Value(float64(t.UnixNano()) / float64(time.Millisecond))
	}
	// EpochNanosTimeEncoder: nanoseconds since the Unix epoch, an integer.
	EpochNanosTimeEncoder TimeEncoder = func(t time.Time) slog.Value {
		return slog.Int64Value(t.UnixNano())
	}
)

// TimeEncoderOfLayout returns a TimeEncoder that formats with layout, as
// zapcore.TimeEncoderOfLayout.
func TimeEncoderOfLayout(layout string) TimeEncoder {
	return func(t time.Time) slog.Value { return slog.StringValue(t.Format(layout)) }
}

// parseTimeEncoding reads --zap-time-encoding.
func parseTimeEncoding(s string) (TimeEncoder, bool) {
	switch s {
	case "rfc3339nano":
		return RFC3339NanoTimeEncoder, true
	case "rfc3339":
		return RFC3339TimeEncoder, true
	case "iso8601":
		return ISO8601TimeEncoder, true
	case "millis":
		return EpochMillisTimeEncoder, true
	case "nanos", "nano":
		return EpochNanosTimeEncoder, true
	case "epoch":
		return EpochTimeEncoder, true
	}
	return nil, false
}
