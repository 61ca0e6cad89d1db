package zap_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/log/zap"
)

// The shapes of go.uber.org/zap/zapcore's EncoderConfig and encoders,
// which this module does not import: options are funcs on such a struct.
type (
	primitiveArrayEncoder interface {
		AppendBool(bool)
		AppendByteString([]byte)
		AppendComplex128(complex128)
		AppendComplex64(complex64)
		AppendFloat64(float64)
		AppendFloat32(float32)
		AppendInt(int)
		AppendInt64(int64)
		AppendInt32(int32)
		AppendInt16(int16)
		AppendInt8(int8)
		AppendString(string)
		AppendUint(uint)
		AppendUint64(uint64)
		AppendUint32(uint32)
		AppendUint16(uint16)
		AppendUint8(uint8)
		AppendUintptr(uintptr)
	}
	zapLevel      int8
	timeEncoder   func(time.Time, primitiveArrayEncoder)
	levelEncoder  func(zapLevel, primitiveArrayEncoder)
	nameEncoder   func(string, primitiveArrayEncoder)
	encoderConfig struct {
		MessageKey, LevelKey, TimeKey, NameKey, CallerKey, StacktraceKey string
		EncodeLevel                                                      levelEncoder
		EncodeTime                                                       timeEncoder
		EncodeName                                                       nameEncoder
		EncodeCaller                                                     func(string, primitiveArrayEncoder)
	}
)

func capitalColor(l zapLevel, enc primitiveArrayEncoder) {
	enc.AppendString(fmt.Sprintf("\x1b[3%dm%s\x1b[0m", 4+int(l), strings.ToUpper(zap.LevelValue(l).String())))
}

func fixedTime(t time.Time, enc primitiveArrayEncoder) { enc.AppendString("T" + t.UTC().Format("15")) }

func epochSeconds(t time.Time, enc primitiveArrayEncoder) { enc.AppendInt64(t.Unix()) }

func TestConsoleEncoderTakesEncoderConfigOptions(t *testing.T) {
	var buf bytes.Buffer
	l := zap.New(zap.WriteTo(&buf), zap.ConsoleEncoder(func(c *encoderConfig) {
		c.EncodeLevel = capitalColor
		c.EncodeTime = fixedTime
		c.EncodeName = func(n string, enc primitiveArrayEncoder) { enc.AppendString("<" + n + ">") }
	}))
	l.WithName("setup").Info("starting", "addr", ":8080")
	line := strings.TrimSuffix(buf.String(), "\n")
	assert.Regexp(t, `^T\d\d\t\x1b\[34mINFO\x1b\[0m\t<setup>\tstarting\t\{"addr":":8080"\}$`, line)
}

func TestEncoderConfigOptionsRenameAndDropKeys(t *testing.T) {
	var buf bytes.Buffer
	opts := zap.Options{DestWriter: &buf, EncoderConfigOptions: []zap.EncoderConfigOption{
		func(c *encoderConfig) {
			require.Equal(t, "ts", c.TimeKey, "options see zap's production keys")
			c.TimeKey, c.MessageKey, c.NameKey = "time", "message", ""
			c.EncodeTime = epochSeconds
		},
		func(c *encoderConfig) { c.LevelKey = "severity" },
	}}
	zap.New(zap.UseFlagOptions(&opts)).WithName("x").Error(errors.New("boom"), "failed")
	got := lines(t, &buf)
	require.Len(t, got, 1)
	assert.Equal(t, "failed", got[0]["message"])
	assert.Equal(t, "error", got[0]["severity"])
	assert.Equal(t, "boom", got[0]["error"])
	assert.IsType(t, float64(0), got[0]["time"], "EncodeTime wins over Options.TimeEncoder")
	for _, gone := range []string{"ts", "msg", "level", "logger"} {
		assert.NotContains(t, got[0], gone)
	}
	assert.Contains(t, got[0], "stacktrace")
}

func TestJSONEncoderOptionsRunAfterOptions(t *testing.T) {
	var buf bytes.Buffer
	set := func(key string) zap.EncoderConfigOption { return func(c *encoderConfig) { c.MessageKey = key } }
	zap.New(zap.WriteTo(&buf), zap.UseDevMode(true),
		func(o *zap.Options) { o.EncoderConfigOptions = append(o.EncoderConfigOptions, set("first")) },
		zap.JSONEncoder(set("second")),
	).Info("hello")
	got := lines(t, &buf)
	require.Len(t, got, 1)
	assert.Equal(t, "hello", got[0]["second"])
}

func TestZapOptsAndOtherValuesAreAccepted(t *testing.T) {
	var buf bytes.Buffer
	opts := zap.Options{DestWriter: &buf, ZapOpts: []zap.ZapOption{struct{}{}},
		EncoderConfigOptions: []zap.EncoderConfigOption{42, func(int) {}, (func(*encoderConfig))(nil)}}
	zap.New(zap.UseFlagOptions(&opts)).Info("hello")
	got := lines(t, &buf)
	require.Len(t, got, 1)
	assert.Equal(t, "hello", got[0]["msg"], "values of other shapes change nothing")
}
