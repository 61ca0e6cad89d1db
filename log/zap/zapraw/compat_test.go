package zapraw_test

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kubeloop/kubeloop/log/zap/zapraw"
)

// controller-runtime's pkg/log/zap signatures (v0.25.2): ported code that
// calls or stores these compiles unchanged.
var (
	_ func(...zapraw.Opts) logr.Logger                                  = zapraw.New
	_ func(...zapraw.Opts) *zap.Logger                                  = zapraw.NewRaw
	_ func(bool) zapraw.Opts                                            = zapraw.UseDevMode
	_ func(io.Writer) zapraw.Opts                                       = zapraw.WriteTo
	_ func(*zapraw.Options) zapraw.Opts                                 = zapraw.UseFlagOptions
	_ func(zapcore.Encoder) func(*zapraw.Options)                       = zapraw.Encoder
	_ func(...zapraw.EncoderConfigOption) func(*zapraw.Options)         = zapraw.JSONEncoder
	_ func(...zapraw.EncoderConfigOption) func(*zapraw.Options)         = zapraw.ConsoleEncoder
	_ func(zapcore.LevelEnabler) func(*zapraw.Options)                  = zapraw.Level
	_ func(zapcore.LevelEnabler) func(*zapraw.Options)                  = zapraw.StacktraceLevel
	_ func(...zap.Option) func(*zapraw.Options)                         = zapraw.RawZapOpts
	_ func(*zapraw.Options, *flag.FlagSet)                              = (*zapraw.Options).BindFlags
	_ func(...zapraw.EncoderConfigOption) zapcore.Encoder               = zapraw.NewEncoderFunc(nil)
	_ func(*zapcore.EncoderConfig)                                      = zapraw.EncoderConfigOption(nil)
	_ zapcore.Encoder                                                   = &zapraw.KubeAwareEncoder{}
	_                                                                   = zapraw.KubeAwareEncoder{Encoder: nil, Verbose: false}
	_ func(*zapraw.Options)                                             = zapraw.Opts(nil)
	_ func(*zapraw.KubeAwareEncoder) zapcore.Encoder                    = (*zapraw.KubeAwareEncoder).Clone
	_ func(zapraw.Options, zapcore.Encoder) zapraw.Options              = func(o zapraw.Options, e zapcore.Encoder) zapraw.Options { o.Encoder = e; return o }
	_ func(zapraw.Options, zapraw.NewEncoderFunc) zapraw.Options        = func(o zapraw.Options, f zapraw.NewEncoderFunc) zapraw.Options { o.NewEncoder = f; return o }
	_ func(zapraw.Options, zapcore.TimeEncoder) zapraw.Options          = func(o zapraw.Options, f zapcore.TimeEncoder) zapraw.Options { o.TimeEncoder = f; return o }
	_ func(zapraw.Options, []zap.Option) zapraw.Options                 = func(o zapraw.Options, z []zap.Option) zapraw.Options { o.ZapOpts = z; return o }
	_ func(zapraw.Options, []zapraw.EncoderConfigOption) zapraw.Options = func(o zapraw.Options, e []zapraw.EncoderConfigOption) zapraw.Options {
		o.EncoderConfigOptions = e
		return o
	}
)

// TestNamesAreControllerRuntimes keeps the exported names and the Options
// fields those of controller-runtime's pkg/log/zap, no more and no fewer,
// so kubeloop-migrate can point a package at this one without notes.
func TestNamesAreControllerRuntimes(t *testing.T) {
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names = append(names, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(names)
	assert.Equal(t, []string{
		"ConsoleEncoder", "Encoder", "EncoderConfigOption", "JSONEncoder", "KubeAwareEncoder", "Level", "New",
		"NewEncoderFunc", "NewRaw", "Options", "Opts", "RawZapOpts", "StacktraceLevel", "UseDevMode", "UseFlagOptions", "WriteTo",
	}, names)

	var fields []string
	for f := range reflect.TypeFor[zapraw.Options]().Fields() {
		fields = append(fields, f.Name)
	}
	assert.ElementsMatch(t, []string{
		"Development", "Encoder", "EncoderConfigOptions", "NewEncoder", "DestWriter", "Level", "StacktraceLevel", "ZapOpts", "TimeEncoder",
	}, fields)
}
