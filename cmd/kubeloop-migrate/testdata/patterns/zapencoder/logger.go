// Package zapencoder customises zap's encoder configuration the way real
// operators' mains do: coloured console output through ConsoleEncoder's
// options, and JSON keys, level names and ISO 8601 times through
// Options.EncoderConfigOptions, with a go.uber.org/zap option in ZapOpts.
package zapencoder

import (
	"fmt"
	"io"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	logzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func colorize(code int, s string) string { return fmt.Sprintf("\x1b[%dm%s\x1b[0m", code, s) }

// clockEncoder writes the hour and minute, in green.
func clockEncoder(t time.Time, enc zapcore.PrimitiveArrayEncoder) {
	enc.AppendString(colorize(32, t.Format("15:04")))
}

// yellowName writes the logger name in yellow.
func yellowName(name string, enc zapcore.PrimitiveArrayEncoder) {
	enc.AppendString(colorize(33, name))
}

// Console returns a development logger writing coloured console lines to w.
func Console(w io.Writer) logr.Logger {
	return logzap.New(logzap.WriteTo(w), logzap.UseDevMode(true), logzap.ConsoleEncoder(func(c *zapcore.EncoderConfig) {
		c.EncodeLevel = zapcore.CapitalColorLevelEncoder
		c.EncodeTime = clockEncoder
		c.EncodeName = yellowName
	}))
}

// JSON returns a production logger writing JSON lines to w, with
// "time" and "message" keys, upper-case levels and ISO 8601 times.
func JSON(w io.Writer) logr.Logger {
	opts := &logzap.Options{DestWriter: w, TimeEncoder: zapcore.RFC3339TimeEncoder}
	return logzap.New(logzap.UseFlagOptions(opts), func(o *logzap.Options) {
		o.ZapOpts = append(o.ZapOpts, zap.AddCaller())
		o.EncoderConfigOptions = append(o.EncoderConfigOptions, func(config *zapcore.EncoderConfig) {
			config.TimeKey = "time"
			config.MessageKey = "message"
			config.EncodeLevel = zapcore.CapitalLevelEncoder
			config.EncodeTime = zapcore.ISO8601TimeEncoder
		})
	})
}
