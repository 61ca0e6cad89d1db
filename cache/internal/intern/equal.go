package intern

import (
	"maps"
	"reflect"
	"slices"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// eqFunc reports whether the values of one type at a and b are equal.
type eqFunc func(a, b unsafe.Pointer) bool

// equality builds and keeps an eqFunc per Go type: field by field through
// the type's layout, found once by reflection, so that comparing two
// values costs a call per field instead of reflect.DeepEqual's walk, and a
// field that a new k8s.io/api version adds is compared without anyone
// writing code for it. Equal means what reflect.DeepEqual means (a nil and
// an empty list differ), except that quantities are equal with the same
// value and format (they serialize the same; one may hold its cached
// string and the other not) and times are equal at the same instant in
// the same location. It is not safe for concurrent use.
type equality struct {
	funcs map[reflect.Type]eqFunc
}

var (
	quantityType     = reflect.TypeFor[resource.Quantity]()
	timeType         = reflect.TypeFor[time.Time]()
	stringMapType    = reflect.TypeFor[map[string]string]()
	resourceListType = reflect.TypeFor[corev1.ResourceList]()
)

// of returns the eqFunc of t.
func (e *equality) of(t reflect.Type) eqFunc {
	if f, ok := e.funcs[t]; ok {
		return f
	}
	if e.funcs == nil {
		e.funcs = make(map[reflect.Type]eqFunc)
	}
	// A recursive type finds itself through f while it is being built.
	var f eqFunc
	e.funcs[t] = func(a, b unsafe.Pointer) bool { return f(a, b) }
	f = e.build(t)
	e.funcs[t] = f
	return f
}

// equalValues reports whether *a equals *b (see equality).
func equalValues[T any](e *equality, a, b *T) bool {
	return a == b || e.of(reflect.TypeFor[T]())(unsafe.Pointer(a), unsafe.Pointer(b))
}

func (e *equality) build(t reflect.Type) eqFunc {
	switch t {
	case quantityType:
		return func(a, b unsafe.Pointer) bool {
			return equalQuantity(*(*resource.Quantity)(a), *(*resource.Quantity)(b))
		}
	case timeType:
		return func(a, b unsafe.Pointer) bool {
			ta, tb := (*time.Time)(a), (*time.Time)(b)
			return ta.Equal(*tb) && ta.Location() == tb.Location()
		}
	case stringMapType:
		return func(a, b unsafe.Pointer) bool {
			ma, mb := *(*map[string]string)(a), *(*map[string]string)(b)
			return (ma == nil) == (mb == nil) && maps.Equal(ma, mb)
		}
	case resourceListType:
		return func(a, b unsafe.Pointer) bool {
			ma, mb := *(*corev1.ResourceList)(a), *(*corev1.ResourceList)(b)
			return (ma == nil) == (mb == nil) && equalResourceList(ma, mb)
		}
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		switch t.Size() {
		case 1:
			return func(a, b unsafe.Pointer) bool { return *(*uint8)(a) == *(*uint8)(b) }
		case 2:
			return func(a, b unsafe.Pointer) bool { return *(*uint16)(a) == *(*uint16)(b) }
		case 4:
			return func(a, b unsafe.Pointer) bool { return *(*uint32)(a) == *(*uint32)(b) }
		case 8:
			return func(a, b unsafe.Pointer) bool { return *(*uint64)(a) == *(*uint64)(b) }
		}
	case reflect.Float32:
		return func(a, b unsafe.Pointer) bool { return *(*float32)(a) == *(*float32)(b) }
	case reflect.Float64:
		return func(a, b unsafe.Pointer) bool { return *(*float64)(a) == *(*float64)(b) }
	case reflect.String:
		return func(a, b unsafe.Pointer) bool { return *(*string)(a) == *(*string)(b) }
	case reflect.Pointer:
		elem := e.of(t.Elem())
		return func(a, b unsafe.Pointer) bool {
			pa, pb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
			if pa == nil || pb == nil || pa == pb {
				return pa == pb
			}
			return elem(pa, pb)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String && t.Elem().Size() == unsafe.Sizeof("") {
			return func(a, b unsafe.Pointer) bool {
				sa, sb := *(*[]string)(a), *(*[]string)(b)
				return (sa == nil) == (sb == nil) && slices.Equal(sa, sb)
			}
		}
		elem, size := e.of(t.Elem()), t.Elem().Size()
		return func(a, b unsafe.Pointer) bool {
			sa, sb := (*sliceHeader)(a), (*sliceHeader)(b)
			if sa.len != sb.len || (sa.data == nil) != (sb.data == nil) {
				return false
			}
			if sa.data == sb.data {
				return true
			}
			for i := range uintptr(sa.len) {
				if !elem(unsafe.Add(sa.data, i*size), unsafe.Add(sb.data, i*size)) {
					return false
				}
			}
			return true
		}
	case reflect.Array:
		elem, size, n := e.of(t.Elem()), t.Elem().Size(), uintptr(t.Len())
		return func(a, b unsafe.Pointer) bool {
			for i := range n {
				if !elem(unsafe.Add(a, i*size), unsafe.Add(b, i*size)) {
					return false
				}
			}
			return true
		}
	case reflect.Struct:
		ops, ok := e.structOps(t)
		if !ok {
			return deepEqual(t)
		}
		return func(a, b unsafe.Pointer) bool {
			for i := range ops {
				op := &ops[i]
				pa, pb := unsafe.Add(a, op.off), unsafe.Add(b, op.off)
				switch op.kind {
				case opBytes:
					if unsafe.String((*byte)(pa), op.n) != unsafe.String((*byte)(pb), op.n) {
						return false
					}
				case opString:
					if *(*string)(pa) != *(*string)(pb) {
						return false
					}
				case opPointer:
					qa, qb := *(*unsafe.Pointer)(pa), *(*unsafe.Pointer)(pb)
					if qa != qb && (qa == nil || qb == nil || !op.eq(qa, qb)) {
						return false
					}
				default:
					if !op.eq(pa, pb) {
						return false
					}
				}
			}
			return true
		}
	}
	// Other maps, interfaces and the rest: the k8s.io/api types shared
	// here have none, and reflect.DeepEqual is right, if slow.
	return deepEqual(t)
}

// A struct is compared by ops: runs of adjacent fields of plain memory
// (numbers, bools) as bytes, strings and pointers in line, the rest by
// their eqFunc. A run includes the padding between its fields: padding
// that differs (it does not, in practice) only makes equal values look
// different, which shares less and is never wrong.
type opKind uint8

const (
	opBytes opKind = iota
	opString
	opPointer // eq compares the pointees
	opCall
)

type structOp struct {
	kind opKind
	off  uintptr
	n    int // opBytes
	eq   eqFunc
}

// structOps returns the ops of struct type t; false if t has unexported
// fields (that equality does not know).
func (e *equality) structOps(t reflect.Type) ([]structOp, bool) {
	var ops []structOp
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			return nil, false
		}
		if f.Type.Size() == 0 {
			continue
		}
		switch k := f.Type.Kind(); {
		case plainKind(k) && f.Type != timeType:
			end := f.Offset + f.Type.Size()
			if n := len(ops); n > 0 && ops[n-1].kind == opBytes {
				ops[n-1].n = int(end - ops[n-1].off)
			} else {
				ops = append(ops, structOp{kind: opBytes, off: f.Offset, n: int(f.Type.Size())})
			}
		case k == reflect.String:
			ops = append(ops, structOp{kind: opString, off: f.Offset})
		case k == reflect.Pointer:
			ops = append(ops, structOp{kind: opPointer, off: f.Offset, eq: e.of(f.Type.Elem())})
		default:
			ops = append(ops, structOp{kind: opCall, off: f.Offset, eq: e.of(f.Type)})
		}
	}
	return ops, true
}

func plainKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// sliceHeader is the layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func deepEqual(t reflect.Type) eqFunc {
	return func(a, b unsafe.Pointer) bool {
		return reflect.DeepEqual(reflect.NewAt(t, a).Elem().Interface(), reflect.NewAt(t, b).Elem().Interface())
	}
}
