package handler

import "reflect"

// isNil reports whether v is nil: a nil interface, or a nil pointer (a
// typed event of *v1.Foo whose object is missing).
func isNil[T any](v T) bool {
	a := any(v)
	if a == nil {
		return true
	}
	rv := reflect.ValueOf(a)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
