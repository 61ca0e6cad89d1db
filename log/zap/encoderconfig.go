package zap

import (
	"log/slog"
	"reflect"
	"strings"
	"time"
)

// EncoderConfigOption changes the encoder's configuration: a
// func(*zapcore.EncoderConfig), as controller-runtime's
// EncoderConfigOption is. This package does not import go.uber.org/zap,
// so the type accepts any value; New calls each func(*T) on a T it makes
// (T is the caller's zapcore.EncoderConfig) and reads back:
//
//   - TimeKey, LevelKey, NameKey, MessageKey, StacktraceKey: the JSON
//     keys of the timestamp, level, logger name, message and stack trace
//     ("ts", "level", "logger", "msg", "stacktrace" before the options
//     run); an empty key leaves that part out of the line, as zap does
//     (in the console too).
//   - EncodeTime, EncodeLevel, EncodeName: the encoders of the timestamp,
//     the level and the logger name (zapcore.ISO8601TimeEncoder,
//     zapcore.CapitalColorLevelEncoder, your own func), called with a
//     zapcore.PrimitiveArrayEncoder that keeps what they append.
//
// The other fields (EncodeCaller, EncodeDuration, LineEnding, ...) are
// not used; values that are not a func taking one pointer to a struct are
// ignored.
type EncoderConfigOption any

// ZapOption stands for a go.uber.org/zap Option (zap.AddCaller(), ...) in
// Options.ZapOpts. They are accepted so that ported code compiles, and
// not applied: there is no zap logger underneath.
type ZapOption any

// encoding is what the encoder configuration options said.
type encoding struct {
	timeKey, levelKey, nameKey, msgKey, stackKey string
	time                                         TimeEncoder                 // nil: Options.TimeEncoder
	level                                        func(LevelValue) slog.Value // nil: zap's level names
	name                                         func(string) string         // nil: the name as is
}

// defaultEncoding is zap's production keys, as controller-runtime's JSON
// lines have them.
func defaultEncoding() encoding {
	return encoding{timeKey: "ts", levelKey: "level", nameKey: "logger", msgKey: "msg", stackKey: "stacktrace"}
}

// apply runs opts on a zapcore.EncoderConfig made by reflection and reads
// back the fields it knows.
func (e *encoding) apply(opts []EncoderConfigOption) {
	var cfg reflect.Value // *zapcore.EncoderConfig, once an option shows its type
	for _, opt := range opts {
		fn := reflect.ValueOf(opt)
		if fn.Kind() != reflect.Func || fn.IsNil() || fn.Type().NumIn() != 1 || fn.Type().NumOut() != 0 {
			continue
		}
		in := fn.Type().In(0)
		if in.Kind() != reflect.Pointer || in.Elem().Kind() != reflect.Struct {
			continue
		}
		if !cfg.IsValid() {
			cfg = reflect.New(in.Elem())
			e.store(cfg.Elem())
		}
		if cfg.Type() != in {
			continue
		}
		fn.Call([]reflect.Value{cfg})
	}
	if cfg.IsValid() {
		e.load(cfg.Elem())
	}
}

// keyFields are the EncoderConfig fields that hold keys, and where they
// go in encoding.
func (e *encoding) keyFields() map[string]*string {
	return map[string]*string{
		"TimeKey": &e.timeKey, "LevelKey": &e.levelKey, "NameKey": &e.nameKey,
		"MessageKey": &e.msgKey, "StacktraceKey": &e.stackKey,
	}
}

// store writes the current keys into cfg, so that options see zap's
// production defaults.
func (e *encoding) store(cfg reflect.Value) {
	for name, p := range e.keyFields() {
		if f := cfg.FieldByName(name); f.IsValid() && f.Kind() == reflect.String && f.CanSet() {
			f.SetString(*p)
		}
	}
}

// load reads the keys and the encoders back from cfg.
func (e *encoding) load(cfg reflect.Value) {
	for name, p := range e.keyFields() {
		if f := cfg.FieldByName(name); f.IsValid() && f.Kind() == reflect.String {
			*p = f.String()
		}
	}
	if fn, ok := encoderField(cfg, "EncodeTime", reflect.TypeFor[time.Time]()); ok {
		e.time = func(t time.Time) slog.Value { return appended(fn, reflect.ValueOf(t)) }
	}
	if fn, ok := encoderField(cfg, "EncodeLevel", nil); ok && fn.Type().In(0).Kind() == reflect.Int8 {
		lt := fn.Type().In(0)
		e.level = func(l LevelValue) slog.Value { return appended(fn, reflect.ValueOf(int8(l)).Convert(lt)) }
	}
	if fn, ok := encoderField(cfg, "EncodeName", reflect.TypeFor[string]()); ok {
		e.name = func(n string) string { return appended(fn, reflect.ValueOf(n)).String() }
	}
}

// encoderField returns cfg's field name when it is a non-nil
// func(first, zapcore.PrimitiveArrayEncoder) that arrayEncoder can be
// passed to; first nil means any first parameter.
func encoderField(cfg reflect.Value, name string, first reflect.Type) (reflect.Value, bool) {
	fn := cfg.FieldByName(name)
	if !fn.IsValid() || fn.Kind() != reflect.Func || fn.IsNil() {
		return reflect.Value{}, false
	}
	t := fn.Type()
	if t.NumIn() != 2 || t.NumOut() != 0 || (first != nil && t.In(0) != first) {
		return reflect.Value{}, false
	}
	if t.In(1).Kind() != reflect.Interface || !reflect.TypeFor[*arrayEncoder]().Implements(t.In(1)) {
		return reflect.Value{}, false
	}
	return fn, true
}

// appended calls a zapcore encoder on v and returns what it appended.
func appended(fn, v reflect.Value) slog.Value {
	var enc arrayEncoder
	fn.Call([]reflect.Value{v, reflect.ValueOf(&enc)})
	switch len(enc.values) {
	case 0:
		return slog.StringValue("")
	case 1:
		return enc.values[0]
	}
	parts := make([]string, len(enc.values))
	for i, v := range enc.values {
		parts[i] = v.String()
	}
	return slog.StringValue(strings.Join(parts, " "))
}

// arrayEncoder has the method set of zapcore.PrimitiveArrayEncoder, so
// zapcore's encoders (and the caller's own) can append to it.
type arrayEncoder struct{ values []slog.Value }

func (a *arrayEncoder) add(v slog.Value) { a.values = append(a.values, v) }

// The methods of zapcore.PrimitiveArrayEncoder.
func (a *arrayEncoder) AppendBool(v bool)             { a.add(slog.BoolValue(v)) }
func (a *arrayEncoder) AppendByteString(v []byte)     { a.add(slog.StringValue(string(v))) }
func (a *arrayEncoder) AppendComplex128(v complex128) { a.add(slog.AnyValue(v)) }
func (a *arrayEncoder) AppendComplex64(v complex64)   { a.add(slog.AnyValue(v)) }
func (a *arrayEncoder) AppendFloat64(v float64)       { a.add(slog.Float64Value(v)) }
func (a *arrayEncoder) AppendFloat32(v float32)       { a.add(slog.Float64Value(float64(v))) }
func (a *arrayEncoder) AppendInt(v int)               { a.add(slog.Int64Value(int64(v))) }
func (a *arrayEncoder) AppendInt64(v int64)           { a.add(slog.Int64Value(v)) }
func (a *arrayEncoder) AppendInt32(v int32)           { a.add(slog.Int64Value(int64(v))) }
func (a *arrayEncoder) AppendInt16(v int16)           { a.add(slog.Int64Value(int64(v))) }
func (a *arrayEncoder) AppendInt8(v int8)             { a.add(slog.Int64Value(int64(v))) }
func (a *arrayEncoder) AppendString(v string)         { a.add(slog.StringValue(v)) }
func (a *arrayEncoder) AppendUint(v uint)             { a.add(slog.Uint64Value(uint64(v))) }
func (a *arrayEncoder) AppendUint64(v uint64)         { a.add(slog.Uint64Value(v)) }
func (a *arrayEncoder) AppendUint32(v uint32)         { a.add(slog.Uint64Value(uint64(v))) }
func (a *arrayEncoder) AppendUint16(v uint16)         { a.add(slog.Uint64Value(uint64(v))) }
func (a *arrayEncoder) AppendUint8(v uint8)           { a.add(slog.Uint64Value(uint64(v))) }
func (a *arrayEncoder) AppendUintptr(v uintptr)       { a.add(slog.Uint64Value(uint64(v))) }
func (a *arrayEncoder) AppendTimeLayout(t time.Time, layout string) {
	a.add(slog.StringValue(t.Format(layout)))
}
