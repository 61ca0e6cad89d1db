package cache

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/cache/internal/informer"
	"github.com/kubeloop/kubeloop/cache/internal/intern"
)

// transformFor returns the transform of key's informers: set the kind
// (decoded typed objects have an empty TypeMeta), strip managedFields
// unless kept, intern shared strings, then the user's transform. An
// update whose labels or annotations equal the stored version's takes
// that version's (already interned) maps instead of building new ones;
// only without a user transform, which might modify them in place. It is
// idempotent, as client-go requires.
func transformFor(in *intern.Interner, key kindKey, kc kindConfig) informer.Transform {
	apiVersion, kind := key.gvk.ToAPIVersionAndKind()
	user := kc.transform
	keep := kc.keepManagedFields
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
				if pa, ok := prev.(metav1.ObjectMetaAccessor); ok && user == nil {
					pm, _ = pa.GetObjectMeta().(*metav1.ObjectMeta)
				}
				in.ObjectMeta(om, pm)
			}
			if p, ok := o.(*corev1.Pod); ok {
				in.Pod(p)
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
