// Package apiutil maps Go objects to kinds and kinds to resources and REST
// clients. The client and the cache share it; operator code rarely needs it.
package apiutil

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// ErrUnknownType is returned (wrapped) for an object whose Go type the
// scheme does not know.
var ErrUnknownType = errors.New("apiutil: type not registered in the scheme")

// GVKForObject returns the kind of obj. Unstructured and
// PartialObjectMetadata objects carry their kind in apiVersion and kind;
// typed objects are looked up in scheme. A typed list yields the list kind
// (for example ConfigMapList).
func GVKForObject(obj runtime.Object, scheme *runtime.Scheme) (schema.GroupVersionKind, error) {
	if obj == nil || (reflect.ValueOf(obj).Kind() == reflect.Pointer && reflect.ValueOf(obj).IsNil()) {
		return schema.GroupVersionKind{}, errors.New("apiutil: object is nil")
	}
	switch obj.(type) {
	case *unstructured.Unstructured, *unstructured.UnstructuredList,
		*metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		gvk := obj.GetObjectKind().GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			return schema.GroupVersionKind{}, fmt.Errorf("apiutil: %T has no apiVersion and kind set; set them before using it", obj)
		}
		return gvk, nil
	}
	if scheme == nil {
		return schema.GroupVersionKind{}, errors.New("apiutil: no scheme to look up " + fmt.Sprintf("%T", obj))
	}
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		if kinds, _, globalErr := clientgoscheme.Scheme.ObjectKinds(obj); globalErr == nil && scheme != clientgoscheme.Scheme {
			if IsBuiltIn(kinds[0]) {
				return schema.GroupVersionKind{}, fmt.Errorf("%w: %T, a built-in kind (add k8s.io/client-go/kubernetes/scheme's AddToScheme to the scheme)", ErrUnknownType, obj)
			}
			// The kubebuilder scaffold registers API types in client-go's
			// global scheme; kubeloop never reads it on its own.
			return schema.GroupVersionKind{}, fmt.Errorf("%w: %T is registered in client-go's global scheme "+
				"(k8s.io/client-go/kubernetes/scheme.Scheme), not in this one; pass that scheme in Options.Scheme, "+
				"or add the type's AddToScheme to the scheme you pass", ErrUnknownType, obj)
		}
		return schema.GroupVersionKind{}, fmt.Errorf("%w: %T (add its package's AddToScheme to the scheme)", ErrUnknownType, obj)
	}
	if len(gvks) == 1 {
		return gvks[0], nil
	}
	// A type registered under several versions: prefer the one the object
	// says it is, else refuse to guess.
	if set := obj.GetObjectKind().GroupVersionKind(); !set.Empty() {
		for _, gvk := range gvks {
			if gvk == set {
				return gvk, nil
			}
		}
	}
	names := make([]string, 0, len(gvks))
	for _, gvk := range gvks {
		names = append(names, gvk.String())
	}
	return schema.GroupVersionKind{}, fmt.Errorf("apiutil: %T is registered as several kinds (%s); set apiVersion and kind on the object", obj, strings.Join(names, ", "))
}

// IsUnstructured reports whether obj is an unstructured object or list.
func IsUnstructured(obj runtime.Object) bool {
	switch obj.(type) {
	case runtime.Unstructured:
		return true
	}
	return false
}

// IsPartialMetadata reports whether obj is a PartialObjectMetadata or its list.
func IsPartialMetadata(obj runtime.Object) bool {
	switch obj.(type) {
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return true
	}
	return false
}
