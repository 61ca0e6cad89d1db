package client

import (
	"context"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// SharedReader is a Reader that can hand out the objects it holds in memory
// without copying them. The cache and the manager's client are
// SharedReaders; GetShared uses the method when a reader has it.
type SharedReader interface {
	Reader
	// GetShared returns the object named by key, of obj's kind, as the
	// reader holds it: no copy is made, so it is shared with the reader
	// and every other caller and must not be modified. obj only names the
	// kind and is not filled; for a typed kind a nil pointer does, for
	// unstructured and metadata-only kinds it carries apiVersion and kind.
	// A missing object is an apierrors NotFound.
	GetShared(ctx context.Context, key ObjectKey, obj Object) (Object, error)
}

// kindOf returns obj, or for a typed nil pointer an empty object of its
// type that stands for the kind: made once per type, never modified.
func (c *cachedClient) kindOf(obj Object) Object {
	if !isNil(obj) {
		return obj
	}
	t := reflect.TypeOf(obj)
	if p, ok := c.kinds.Load(t); ok {
		return p.(Object)
	}
	p, _ := c.kinds.LoadOrStore(t, newObjectLike(obj))
	return p.(Object)
}

// newObjectLike returns a new, empty object of obj's Go type, with obj's
// apiVersion and kind when obj is unstructured or metadata-only.
func newObjectLike(obj Object) Object {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		u := &unstructured.Unstructured{}
		if o != nil {
			u.SetGroupVersionKind(o.GroupVersionKind())
		}
		return u
	case *metav1.PartialObjectMetadata:
		m := &metav1.PartialObjectMetadata{}
		if o != nil {
			m.TypeMeta = o.TypeMeta
		}
		return m
	}
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(Object)
}
