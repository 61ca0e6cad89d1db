package sharding

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
)

// Key returns the hash key of an object of kind gk: group/kind/namespace/name,
// or, when the object has a controller ownerReference, the key of that
// owner (in the object's namespace), so that children land on their
// parent's shard.
func Key(gk schema.GroupKind, obj client.Object) string {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err == nil {
				return keyOf(gv.Group, ref.Kind, obj.GetNamespace(), ref.Name)
			}
		}
	}
	return keyOf(gk.Group, gk.Kind, obj.GetNamespace(), obj.GetName())
}

func keyOf(group, kind, namespace, name string) string {
	return group + "/" + kind + "/" + namespace + "/" + name
}

// kindOf returns the sharded kind of gk.
func (r *Ring) kindOf(gk schema.GroupKind) (kind, bool) {
	for _, k := range r.kinds {
		if k.gvk.GroupKind() == gk {
			return k, true
		}
	}
	return kind{}, false
}
