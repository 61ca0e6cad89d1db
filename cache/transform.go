package cache

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/cache/internal/informer"
	"github.com/kubeloop/kubeloop/cache/internal/intern"
)

// transformFor returns the transform of key's informers: set the kind
// (decoded typed objects have an empty TypeMeta), strip managedFields
// unless kept, intern shared strings, then the user's transform. Without
// a user transform, which might modify the object in place, the values
// objects repeat are shared too (intern.Interner.ObjectMeta, Pod): an
// update whose labels or annotations equal the stored version's takes
// that version's maps, other equal label and annotation maps are one map,
// and a workload's Pods share their equal sub-structures. It is
// idempotent, as client-go requires.
func transformFor(in *intern.Interner, key kindKey, keep bool, user toolscache.TransformFunc) informer.Transform {
	apiVersion, kind := key.gvk.ToAPIVersionAndKind()
	// Values shared between objects must never be modified; a user
	// transform might modify the object in place.
	share := user == nil
	return func(obj, prev any) (any, error) {
		switch o := obj.(type) {
		case *unstructured.Unstructured:
			if !keep {
				if md, ok := o.Object["metadata"].(map[string]any); ok {
					delete(md, "managedFields")
				}
			}
			in.UnstructuredMeta(o)
		case metav1.ObjectMetaAccessor:
			if om, ok := o.GetObjectMeta().(*metav1.ObjectMeta); ok {
				if !keep {
					om.ManagedFields = nil
				}
				var pm *metav1.ObjectMeta
				if pa, ok := prev.(metav1.ObjectMetaAccessor); ok {
					pm, _ = pa.GetObjectMeta().(*metav1.ObjectMeta)
				}
				in.ObjectMeta(om, pm, share)
			}
			if p, ok := o.(*corev1.Pod); ok {
				in.Pod(p, share)
			}
			setTypeMeta(o, apiVersion, kind)
		}
		if user != nil {
			return user(obj)
		}
		return obj, nil
	}
}

// setTypeMeta sets apiVersion and kind on a typed or metadata object,
// sharing the strings.
func setTypeMeta(obj any, apiVersion, kind string) {
	if o, ok := obj.(runtime.Object); ok {
		if tm, ok := o.GetObjectKind().(*metav1.TypeMeta); ok {
			tm.APIVersion, tm.Kind = apiVersion, kind
		}
	}
}
