package store

import (
	"fmt"
	"reflect"
	"unsafe"
)

// The store keeps each object as an unsafe.Pointer to its struct, all of
// one Go type (s.typ, learnt from the first object stored): these two turn
// an object into that pointer and back.

// object returns the stored object p points to, with its Go type.
func (s *Store) object(p unsafe.Pointer) any {
	return reflect.NewAt(s.elem, p).Interface()
}

// pointer returns the pointer the store keeps for obj. The caller holds
// s.mu for writing.
func (s *Store) pointer(obj any) (unsafe.Pointer, error) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil, fmt.Errorf("cache: the store holds pointers to objects, not %T", obj)
	}
	if s.typ == nil {
		s.typ, s.elem = v.Type(), v.Type().Elem()
	} else if v.Type() != s.typ {
		return nil, fmt.Errorf("cache: the store holds %s, not %T", s.typ, obj)
	}
	return v.UnsafePointer(), nil
}
