package cache

import ()

// KindSize is what the cache holds of one kind, in one object shape and
// one namespace. InformerCache.Sizes returns them.
type KindSize struct {
	// Group, Version and Kind name the kind ("" group for the core API).
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// Shape is how the informer holds the objects: "typed" (Go structs),
	// "unstructured", or "metadata" (metav1.PartialObjectMetadata, as
	// builder.OnlyMetadata watches). One kind held in two shapes is held
	// twice.
	Shape string `json:"shape"`
	// Namespace is the objects' namespace, "" for a cluster-scoped kind.
	Namespace string `json:"namespace"`
	// Objects is the number of objects held, exact when Sizes ran.
	Objects int `json:"objects"`
	// Bytes approximates their size: see InformerCache.Sizes.
	Bytes int64 `json:"bytes"`
}

// Bounds of the sample Sizes measures. The first exists so that a
// namespace with few objects is measured exactly; the second bounds the
// work of one call per informer, whatever the number of namespaces.
const (
	sizeSamplesPerNamespace = 16
	sizeSamplesPerInformer  = 1024
)
