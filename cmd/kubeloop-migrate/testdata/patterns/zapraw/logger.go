// Package zapraw logs the way clickhouse-operator does: cmd/main.go builds
// a *zap.Logger with controller-runtime's zap.NewRaw from the scaffold's
// flags, gives controller-runtime logr's view of it (ctrl.SetLogger), and
// keeps the *zap.Logger for the operator's own structured logger, which
// its reconcilers and test suites use.
package zapraw

import (
	"context"
	"flag"
	"io"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// setupLog is created before the logger is set, as in the scaffold.
var setupLog = ctrl.Log.WithName("setup")

// Setup is main's logging: the zap flags (development by default), a
// *zap.Logger with a field naming the operator, set as controller-runtime's
// logger, and the operator's Logger over the same *zap.Logger.
func Setup(fs *flag.FlagSet, args []string, w io.Writer) (Logger, error) {
	opts := crzap.Options{Development: true}
	opts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Logger{}, err
	}
	logger := crzap.NewRaw(crzap.UseFlagOptions(&opts), crzap.WriteTo(w),
		crzap.RawZapOpts(zap.Fields(zap.String("operator", "patterns"))))
	ctrl.SetLogger(zapr.NewLogger(logger))
	setupLog.Info("logging set up", "devel", opts.Development)
	return NewLogger(logger), nil
}

// Logger is the operator's own logger on a *zap.Logger.
type Logger struct {
	l *zap.Logger
}

// NewLogger wraps l.
func NewLogger(l *zap.Logger) Logger {
	return Logger{l: l}
}

// WithObject returns a logger whose lines name obj.
func (l Logger) WithObject(_ context.Context, obj client.Object) Logger {
	return Logger{l: l.l.With(zap.String("namespace", obj.GetNamespace()), zap.String("name", obj.GetName()))}
}

// Named returns a logger under name.
func (l Logger) Named(name string) Logger {
	return Logger{l: l.l.Named(name)}
}

// Info logs msg with key and value pairs.
func (l Logger) Info(msg string, keysAndVals ...any) {
	l.l.Info(msg, fields(keysAndVals)...)
}

// Debug logs msg at debug level.
func (l Logger) Debug(msg string, keysAndVals ...any) {
	l.l.Debug(msg, fields(keysAndVals)...)
}

// Error logs msg with err.
func (l Logger) Error(err error, msg string, keysAndVals ...any) {
	l.l.Error(msg, append(fields(keysAndVals), zap.Error(err))...)
}

// Enabled reports whether lines at level are written.
func (l Logger) Enabled(level zapcore.Level) bool {
	return l.l.Core().Enabled(level)
}

func fields(keysAndVals []any) []zap.Field {
	out := make([]zap.Field, 0, len(keysAndVals)/2)
	for i := 0; i+1 < len(keysAndVals); i += 2 {
		key, ok := keysAndVals[i].(string)
		if !ok {
			continue
		}
		out = append(out, zap.Any(key, keysAndVals[i+1]))
	}
	return out
}
