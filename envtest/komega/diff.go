package komega

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// path names a field twice: by Go names and by JSON names.
type path struct {
	types, json []string
}

// String is controller-runtime's form, (Go.Path/json.path).
func (p path) String() string {
	return "(" + strings.Join(p.types, ".") + "/" + strings.Join(p.json, ".") + ")"
}

// jsonString is the JSON form, or the Go form where a JSON name is missing.
func (p path) jsonString() string {
	if len(p.json) == 0 {
		if len(p.types) == 0 {
			return "(the object)"
		}
		return strings.Join(p.types, ".")
	}
	return strings.Join(p.json, ".")
}

// field returns p extended by a struct field; an empty json name (an
// inlined struct) adds no JSON segment.
func (p path) field(goName, jsonName string) path {
	q := path{types: append(p.types[:len(p.types):len(p.types)], goName), json: p.json}
	if jsonName != "" {
		q.json = append(p.json[:len(p.json):len(p.json)], jsonName)
	}
	return q
}

// index returns p extended by a list index, appended to the last segment.
func (p path) index(i int) path {
	s := fmt.Sprintf("[%d]", i)
	return path{types: appendToLast(p.types, s), json: appendToLast(p.json, s)}
}

// key returns p extended by a map key: its own segment, or [key] on the
// last segment when the key holds a separator.
func (p path) key(k string) path {
	if strings.ContainsAny(k, ".[]/\\") {
		s := "[" + k + "]"
		return path{types: appendToLast(p.types, s), json: appendToLast(p.json, s)}
	}
	return path{types: append(p.types[:len(p.types):len(p.types)], k), json: append(p.json[:len(p.json):len(p.json)], k)}
}

func appendToLast(segs []string, s string) []string {
	out := append([]string(nil), segs...)
	if len(out) == 0 {
		return []string{s}
	}
	out[len(out)-1] += s
	return out
}

// difference is one path whose values differ.
type difference struct {
	path      path
	want, got string // formatted values
}

// differ walks two values and records where they differ.
type differ struct {
	diffs []difference
}

// diff returns the paths where actual differs from original.
func diff(original, actual interface{}) []difference {
	d := &differ{}
	d.walk(reflect.ValueOf(original), reflect.ValueOf(actual), path{})
	return d.diffs
}

func (d *differ) report(p path, a, b reflect.Value) {
	d.diffs = append(d.diffs, difference{path: p, want: format(a), got: format(b)})
}

func (d *differ) walk(a, b reflect.Value, p path) {
	if !a.IsValid() || !b.IsValid() {
		if a.IsValid() != b.IsValid() {
			d.report(p, a, b)
		}
		return
	}
	if a.Type() != b.Type() {
		d.report(p, a, b)
		return
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				d.report(p, a, b)
			}
			return
		}
		d.walk(a.Elem(), b.Elem(), p)
		return
	}
	if eq, ok := equalMethod(a, b); ok {
		if !eq {
			d.report(p, a, b)
		}
		return
	}
	switch a.Kind() {
	case reflect.Struct:
		before := len(d.diffs)
		t := a.Type()
		hidden := false
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				hidden = true
				continue
			}
			d.walk(a.Field(i), b.Field(i), p.field(f.Name, jsonName(f)))
		}
		// Unexported state is compared as a whole, at the struct's path.
		if hidden && len(d.diffs) == before && a.CanInterface() && b.CanInterface() &&
			!reflect.DeepEqual(a.Interface(), b.Interface()) {
			d.report(p, a, b)
		}
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			d.report(p, a, b)
			return
		}
		if a.Type().Elem().Kind() == reflect.Uint8 {
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				d.report(p, a, b)
			}
			return
		}
		d.walkList(a, b, p)
	case reflect.Array:
		d.walkList(a, b, p)
	case reflect.Map:
		if a.IsNil() != b.IsNil() {
			d.report(p, a, b)
			return
		}
		keys := map[string]reflect.Value{}
		for _, k := range append(a.MapKeys(), b.MapKeys()...) {
			keys[fmt.Sprint(k.Interface())] = k
		}
		names := make([]string, 0, len(keys))
		for n := range keys {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			k := keys[n]
			av, bv := a.MapIndex(k), b.MapIndex(k)
			if !av.IsValid() || !bv.IsValid() {
				if av.IsValid() != bv.IsValid() {
					d.report(p.key(n), av, bv)
				}
				continue
			}
			d.walk(av, bv, p.key(n))
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if a.Pointer() != b.Pointer() {
			d.report(p, a, b)
		}
	default:
		if !a.Equal(b) {
			d.report(p, a, b)
		}
	}
}

// walkList compares lists item by item; items one side lacks differ.
func (d *differ) walkList(a, b reflect.Value, p path) {
	n := max(a.Len(), b.Len())
	for i := 0; i < n; i++ {
		switch {
		case i >= a.Len():
			d.report(p.index(i), reflect.Value{}, b.Index(i))
		case i >= b.Len():
			d.report(p.index(i), a.Index(i), reflect.Value{})
		default:
			d.walk(a.Index(i), b.Index(i), p.index(i))
		}
	}
}

// equalMethod compares with the type's Equal method (func (T) Equal(T)
// bool or func (*T) Equal(*T) bool), as metav1.Time and resource.Quantity
// have; ok is false when there is none.
func equalMethod(a, b reflect.Value) (eq, ok bool) {
	t := a.Type()
	pa, pb := reflect.New(t), reflect.New(t)
	if !a.CanInterface() || !b.CanInterface() {
		return false, false
	}
	pa.Elem().Set(a)
	pb.Elem().Set(b)
	m := pa.MethodByName("Equal")
	if !m.IsValid() {
		return false, false
	}
	mt := m.Type()
	if mt.NumIn() != 1 || mt.NumOut() != 1 || mt.Out(0).Kind() != reflect.Bool {
		return false, false
	}
	var arg reflect.Value
	switch mt.In(0) {
	case t:
		arg = pb.Elem()
	case pb.Type():
		arg = pb
	default:
		return false, false
	}
	return m.Call([]reflect.Value{arg})[0].Bool(), true
}

// jsonName returns a struct field's JSON name: its tag's, "" for an
// embedded struct without one (inlined), else the Go name.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch {
	case name == "-":
		return f.Name
	case name != "":
		return name
	case f.Anonymous:
		return ""
	}
	return f.Name
}

// maxValue bounds one value in a failure message.
const maxValue = 200

// format renders one differing value.
func format(v reflect.Value) string {
	if !v.IsValid() {
		return "<missing>"
	}
	if !v.CanInterface() {
		return "<" + v.Type().String() + ">"
	}
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface || v.Kind() == reflect.Map || v.Kind() == reflect.Slice) && v.IsNil() {
		return "<nil " + v.Type().String() + ">"
	}
	s := fmt.Sprintf("%#v", v.Interface())
	if v.Kind() == reflect.Pointer {
		s = "&" + fmt.Sprintf("%#v", v.Elem().Interface())
	}
	if len(s) > maxValue {
		s = s[:maxValue] + "..."
	}
	return s
}

// splitPath splits a path at dots outside brackets.
func splitPath(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case '.':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// filter keeps the differences under a match path (all, when there is
// none) and under no ignore path.
func (o *EqualObjectOptions) filter(diffs []difference) []difference {
	var out []difference
	for _, d := range diffs {
		if len(o.matchPaths) > 0 && !underAny(d.path, o.matchPaths) {
			continue
		}
		if underAny(d.path, o.ignorePaths) {
			continue
		}
		out = append(out, d)
	}
	return out
}

func underAny(p path, prefixes [][]string) bool {
	for _, prefix := range prefixes {
		if under(p.types, prefix) || under(p.json, prefix) {
			return true
		}
	}
	return false
}

// under reports whether segs starts with prefix; the last prefix segment
// also matches a segment it starts followed by '[' (an item of it).
func under(segs, prefix []string) bool {
	if len(prefix) == 0 || len(prefix) > len(segs) {
		return false
	}
	for i, want := range prefix {
		got := segs[i]
		if got == want {
			continue
		}
		if i == len(prefix)-1 && strings.HasPrefix(got, want) && got[len(want)] == '[' {
			continue
		}
		return false
	}
	return true
}
