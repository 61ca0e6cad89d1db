package objmap

import (
	"fmt"
	"reflect"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Object is an object with metadata (Object; declared here so the
// package needs nothing of client).
type Object interface {
	metav1.Object
	runtime.Object
}

// ToMap converts obj to its stored form with apiVersion and kind set from
// gvk.
func ToMap(obj Object, gvk schema.GroupVersionKind) (map[string]any, error) {
	var m map[string]any
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		m = runtime.DeepCopyJSON(o.Object)
	case *metav1.PartialObjectMetadata:
		md, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&o.ObjectMeta)
		if err != nil {
			return nil, err
		}
		m = map[string]any{"metadata": md}
	default:
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, err
		}
	}
	if m == nil {
		m = map[string]any{}
	}
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return m, nil
}

// Into fills obj with a deep copy of m, an object of kind gvk.
func Into(m map[string]any, obj Object, gvk schema.GroupVersionKind) error {
	cp := runtime.DeepCopyJSON(m)
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		cp["apiVersion"] = gvk.GroupVersion().String()
		o.Object = cp
		return nil
	case *metav1.PartialObjectMetadata:
		*o = metav1.PartialObjectMetadata{}
		md, _ := cp["metadata"].(map[string]any)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(md, &o.ObjectMeta); err != nil {
			return err
		}
		o.SetGroupVersionKind(gvk)
		return nil
	}
	v := reflect.ValueOf(obj).Elem()
	v.Set(reflect.Zero(v.Type()))
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(cp, obj); err != nil {
		return fmt.Errorf("decode into %T: %w", obj, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return nil
}

// Item returns an empty item of list (of item kind gvk): unstructured or
// metadata-only for such lists, else the scheme's Go type.
func Item(s *runtime.Scheme, list runtime.Object, gvk schema.GroupVersionKind) (Object, error) {
	switch list.(type) {
	case *unstructured.UnstructuredList:
		return &unstructured.Unstructured{}, nil
	case *metav1.PartialObjectMetadataList:
		return &metav1.PartialObjectMetadata{}, nil
	}
	return newObject(s, gvk)
}

// Typed returns m as the Go type s has for gvk, or as unstructured when s
// does not know the kind.
func Typed(s *runtime.Scheme, gvk schema.GroupVersionKind, m map[string]any) (Object, error) {
	var obj Object = &unstructured.Unstructured{}
	if s.Recognizes(gvk) {
		var err error
		if obj, err = newObject(s, gvk); err != nil {
			return nil, err
		}
	}
	return obj, Into(m, obj, gvk)
}

func newObject(s *runtime.Scheme, gvk schema.GroupVersionKind) (Object, error) {
	obj, err := s.New(gvk)
	if err != nil {
		return nil, err
	}
	o, ok := obj.(Object)
	if !ok {
		return nil, fmt.Errorf("%T is not a Object", obj)
	}
	return o, nil
}

// Meta gives typed access to a stored map's metadata; its setters write
// into m.
func Meta(m map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}

// DeepCopy returns a deep copy of m; DeepCopyValue of any JSON value, nil
// staying nil.
func DeepCopy(m map[string]any) map[string]any { return runtime.DeepCopyJSON(m) }

// DeepCopyValue returns a deep copy of a JSON value; nil stays nil.
func DeepCopyValue(v any) any {
	if v == nil {
		return nil
	}
	return runtime.DeepCopyJSONValue(v)
}

// ParseRV parses a resourceVersion of the fake (a decimal counter).
func ParseRV(rv string) (uint64, bool) {
	n, err := strconv.ParseUint(rv, 10, 64)
	return n, err == nil
}

// SetOrDelete sets m[k] to v, or deletes k when v is nil.
func SetOrDelete(m map[string]any, k string, v any) {
	if v == nil {
		delete(m, k)
		return
	}
	m[k] = v
}
