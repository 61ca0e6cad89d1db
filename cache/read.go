package cache

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/client"
)

// The helpers of the read path: the copy mode and filling of a Get, and
// the label match of List.

// getNoCopy resolves the copy mode of a Get: the kind's default, or the
// options'. The common option values are recognised without allocating.
func getNoCopy(def bool, opts []client.GetOption) bool {
	if len(opts) == 0 {
		return def
	}
	if len(opts) == 1 && opts[0] == client.UnsafeDisableDeepCopy {
		return true
	}
	o := (&client.GetOptions{}).ApplyOptions(opts)
	if o.UnsafeDisableDeepCopy != nil {
		return *o.UnsafeDisableDeepCopy
	}
	return def
}

// fillTyped sets *out to the cached typed object src, or to a deep copy of
// it. The store holds the kind's Go type, so out and src must match.
func fillTyped(out client.Object, src any, deep bool) error {
	if reflect.TypeOf(out) != reflect.TypeOf(src) {
		return fmt.Errorf("cannot fill %T with cached %T", out, src)
	}
	if deep {
		if deepCopyInto(out, src) {
			return nil
		}
		o, ok := src.(runtime.Object)
		if !ok {
			return fmt.Errorf("cached %T is not a runtime.Object", src)
		}
		src = o.DeepCopyObject()
	}
	reflect.ValueOf(out).Elem().Set(reflect.ValueOf(src).Elem())
	return nil
}

// fill sets out to the cached object src, copying it when deep is true:
// any shape.
func fill(out client.Object, src any, deep bool) error {
	switch o := out.(type) {
	case *unstructured.Unstructured:
		s, ok := src.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("cached object is %T, not unstructured", src)
		}
		if deep {
			s = s.DeepCopy()
		}
		o.Object = s.Object
		return nil
	case runtime.Unstructured:
		s, ok := src.(runtime.Unstructured)
		if !ok {
			return fmt.Errorf("cached object is %T, not unstructured", src)
		}
		if deep {
			s = s.DeepCopyObject().(runtime.Unstructured)
		}
		o.SetUnstructuredContent(s.UnstructuredContent())
		return nil
	}
	return fillTyped(out, src, deep)
}

func matchesLabels(sel labels.Selector, obj client.Object) bool {
	if sel == nil || sel.Empty() {
		return true
	}
	return sel.Matches(labels.Set(obj.GetLabels()))
}
