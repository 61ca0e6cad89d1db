package sharding

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// Key returns the hash key of an object of kind gk: group/kind/namespace/name,
// or, when the object has a controller ownerReference, the key of that
// owner (in the object's namespace), so that children land on their
// parent's shard.
func Key(gk schema.GroupKind, obj client.Object) string { return spec.Key(gk, obj) }
