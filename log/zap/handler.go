package zap

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// config is a handler's settings after defaulting, shared by the handlers
// WithAttrs and WithGroup derive.
type config struct {
	out     io.Writer
	level   LevelEnabler
	stack   LevelEnabler
	time    TimeEncoder
	console bool
	verbose bool     // Development: objects in full
	enc     encoding // keys and encoders from the EncoderConfigOptions

	mu  sync.Mutex   // console: guards buf and each write to out
	buf bytes.Buffer // console: the fields, as the inner JSON handler wrote them
}

// handler turns a record into zap's shape (level names, "ts", the logger
// name, "error", "stacktrace") and has a slog.JSONHandler encode it: to
// out directly, or, for the console, into buf as the line's last column.
type handler struct {
	c     *config
	inner slog.Handler
}

var _ slog.Handler = (*handler)(nil)

// tsZone marks the record's own time for replace: only a time in this
// location is the built-in "time" attribute, not a user's "time" field.
var tsZone = time.FixedZone("zap-ts", 0)

// msgMark stands for the message in a console record, so that replace
// drops the built-in "msg" and never a user's field of that name.
const msgMark = "\x00zap-msg\x00"

func newHandler(c *config) *handler {
	w := c.out
	if c.console {
		w = &c.buf
	}
	return &handler{c: c, inner: slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level:       slog.Level(-1 << 20), // Enabled is ours; inner is only asked to Handle
		ReplaceAttr: c.replace,
	})}
}

// replace renames and re-encodes the built-in attributes and, outside
// development, shortens Kubernetes objects.
func (c *config) replace(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 {
		switch v := a.Value; {
		case a.Key == slog.TimeKey && v.Kind() == slog.KindTime && v.Time().Location() == tsZone:
			return keyed(c.enc.timeKey, c.time(v.Time().In(time.Local)))
		case a.Key == slog.LevelKey && v.Kind() == slog.KindAny:
			if l, ok := v.Any().(slog.Level); ok {
				if c.console {
					return slog.Attr{}
				}
				return keyed(c.enc.levelKey, c.levelValue(fromSlog(l), false))
			}
		case a.Key == slog.MessageKey && v.Kind() == slog.KindString && v.String() == msgMark:
			return slog.Attr{}
		}
	}
	if !c.verbose && a.Value.Kind() == slog.KindAny {
		if obj, ok := a.Value.Any().(kubeObject); ok {
			return slog.Attr{Key: a.Key, Value: objectRef(obj)}
		}
	}
	return a
}

// keyed is the attribute key: v, or nothing when key is empty (zap leaves
// out a part whose key is empty).
func keyed(key string, v slog.Value) slog.Attr {
	if key == "" {
		return slog.Attr{}
	}
	return slog.Attr{Key: key, Value: v}
}

// levelValue renders l: EncodeLevel's, else zap's lower-case name (JSON)
// or upper-case name (console).
func (c *config) levelValue(l LevelValue, console bool) slog.Value {
	switch {
	case c.enc.level != nil:
		return c.enc.level(l)
	case console:
		return slog.StringValue(l.capitalString())
	}
	return slog.StringValue(l.String())
}

// nameValue renders a logger name through EncodeName.
func (c *config) nameValue(name string) string {
	if c.enc.name != nil {
		return c.enc.name(name)
	}
	return name
}

// Enabled asks Options.Level.
func (h *handler) Enabled(_ context.Context, l slog.Level) bool {
	return h.c.level.Enabled(fromSlog(l))
}

// WithAttrs returns a handler whose lines carry attrs.
func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &handler{c: h.c, inner: h.inner.WithAttrs(attrs)}
}

// WithGroup returns a handler whose later attributes are inside group name.
func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{c: h.c, inner: h.inner.WithGroup(name)}
}

// Handle writes one line for r.
func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	level := fromSlog(r.Level)
	if !h.c.level.Enabled(level) { // logr's Error does not ask Enabled
		return nil
	}
	t := r.Time
	if !t.IsZero() {
		t = t.In(tsZone)
	}
	msg := r.Message
	renamed := !h.c.console && h.c.enc.msgKey != slog.MessageKey
	if h.c.console || renamed {
		msg = msgMark
	}
	if h.c.console {
		t = time.Time{}
	}
	out := slog.NewRecord(t, r.Level, msg, r.PC)
	if renamed && h.c.enc.msgKey != "" {
		out.AddAttrs(slog.String(h.c.enc.msgKey, r.Message))
	}
	var name string
	r.Attrs(func(a slog.Attr) bool {
		switch {
		case a.Key == "logger" && name == "" && a.Value.Kind() == slog.KindString:
			// logr's slog sink joins names with "/", zapr with ".".
			name = h.c.nameValue(strings.ReplaceAll(a.Value.String(), "/", "."))
			if !h.c.console && h.c.enc.nameKey != "" {
				out.AddAttrs(slog.String(h.c.enc.nameKey, name))
			}
		case a.Key == "err" && level >= ErrorLevel && isError(a.Value):
			out.AddAttrs(slog.Attr{Key: "error", Value: a.Value})
		default:
			out.AddAttrs(a)
		}
		return true
	})
	var stack string
	if h.c.stack.Enabled(level) && h.c.enc.stackKey != "" {
		stack = stacktrace(r.PC)
		if !h.c.console {
			out.AddAttrs(slog.String(h.c.enc.stackKey, stack))
		}
	}
	if !h.c.console {
		return h.inner.Handle(ctx, out)
	}

	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	h.c.buf.Reset()
	if err := h.inner.Handle(ctx, out); err != nil {
		return err
	}
	fields := bytes.TrimSuffix(h.c.buf.Bytes(), []byte("\n"))
	var cols []string
	if !r.Time.IsZero() && h.c.enc.timeKey != "" {
		cols = append(cols, consoleValue(h.c.time(r.Time)))
	}
	if h.c.enc.levelKey != "" {
		cols = append(cols, consoleValue(h.c.levelValue(level, true)))
	}
	if name != "" && h.c.enc.nameKey != "" {
		cols = append(cols, name)
	}
	if r.Message != "" && h.c.enc.msgKey != "" {
		cols = append(cols, r.Message)
	}
	var line bytes.Buffer
	line.WriteString(strings.Join(cols, "\t"))
	if string(fields) != "{}" {
		line.WriteByte('\t')
		line.Write(fields)
	}
	line.WriteByte('\n')
	if stack != "" {
		line.WriteString(stack)
		line.WriteByte('\n')
	}
	_, err := h.c.out.Write(line.Bytes())
	return err
}

func consoleValue(v slog.Value) string {
	if v.Kind() == slog.KindFloat64 {
		return strconv.FormatFloat(v.Float64(), 'f', -1, 64)
	}
	return v.String()
}

func isError(v slog.Value) bool {
	_, ok := v.Any().(error)
	return v.Kind() == slog.KindAny && ok
}

// stacktrace returns the goroutine's stack from the frame that logged (pc)
// outward, as zap writes it: "function\n\tfile:line" per frame. Without pc
// it starts at the first frame outside slog, logr and this package.
func stacktrace(pc uintptr) string {
	var pcs [64]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	caller := ""
	if pc != 0 {
		f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
		caller = f.Function
	}
	var b strings.Builder
	started := false
	for {
		f, more := frames.Next()
		if !started {
			started = f.Function == caller ||
				(caller == "" && !strings.HasPrefix(f.Function, "log/slog.") && !strings.HasPrefix(f.Function, "github.com/go-logr/logr.") &&
					!strings.HasPrefix(f.Function, "github.com/kubeloop/kubeloop/log"))
		}
		if started {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(f.Function + "\n\t" + f.File + ":" + strconv.Itoa(f.Line))
		}
		if !more {
			break
		}
	}
	if b.Len() == 0 && caller != "" { // pc is not on this goroutine's stack
		return stacktrace(0)
	}
	return b.String()
}

// kubeObject is what controller-runtime's production encoder shortens:
// an object with Kubernetes metadata (metav1.Object's getters).
type kubeObject interface {
	GetName() string
	GetNamespace() string
}

// objectRef is obj as {apiVersion, kind, namespace, name}; apiVersion and
// kind only when the object carries them (an embedded TypeMeta or an
// unstructured object), namespace only when set.
func objectRef(obj kubeObject) slog.Value {
	rv := reflect.ValueOf(obj)
	if rv.Kind() == reflect.Pointer && rv.IsNil() {
		return slog.AnyValue(nil)
	}
	var attrs []slog.Attr
	apiVersion, kind := typeMeta(obj, rv)
	if apiVersion != "" {
		attrs = append(attrs, slog.String("apiVersion", apiVersion), slog.String("kind", kind))
	}
	if ns := obj.GetNamespace(); ns != "" {
		attrs = append(attrs, slog.String("namespace", ns))
	}
	return slog.GroupValue(append(attrs, slog.String("name", obj.GetName()))...)
}

func typeMeta(obj kubeObject, rv reflect.Value) (apiVersion, kind string) {
	if u, ok := obj.(interface {
		GetAPIVersion() string
		GetKind() string
	}); ok {
		return u.GetAPIVersion(), u.GetKind()
	}
	rv = reflect.Indirect(rv)
	if rv.Kind() != reflect.Struct {
		return "", ""
	}
	tm := rv.FieldByName("TypeMeta")
	if tm.Kind() != reflect.Struct {
		return "", ""
	}
	av, k := tm.FieldByName("APIVersion"), tm.FieldByName("Kind")
	if av.Kind() != reflect.String || k.Kind() != reflect.String {
		return "", ""
	}
	return av.String(), k.String()
}
