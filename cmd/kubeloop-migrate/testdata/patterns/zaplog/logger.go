// Package zaplog builds the operator's logger the way many mains do:
// controller-runtime's zap options with zapcore values.
package zaplog

import (
	"io"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// New returns a JSON logger writing to w that shows V(2) and below, with
// ISO 8601 timestamps and stack traces only from panic level.
func New(w io.Writer) logr.Logger {
	opts := zap.Options{
		Development:     false,
		DestWriter:      w,
		Level:           zapcore.Level(-2),
		StacktraceLevel: zapcore.PanicLevel,
		TimeEncoder:     zapcore.ISO8601TimeEncoder,
	}
	return zap.New(zap.UseFlagOptions(&opts))
}
