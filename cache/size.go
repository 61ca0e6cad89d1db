package cache

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/kubeloop/kubeloop/cache/internal/store"
)

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

// Sizes returns what the cache holds: one KindSize per kind, shape and
// namespace that has objects, sorted by group, kind, version, shape and
// namespace. A kind whose informers hold nothing (yet) is listed once,
// with Namespace "" and zero Objects, so that every informer shows up.
//
// Objects is exact. Bytes is an estimate of the size of the objects as
// JSON, as stored: what `kubectl get -o json` would print for them less
// metadata.managedFields, which the cache does not keep (unless
// ByObject.KeepManagedFields). Sizes encodes up to 16 objects of each
// namespace, at most 1,024 per informer, and multiplies their mean size
// by the number of objects; a namespace of at most 16 objects is measured
// exactly, and one past the per-informer budget gets the informer's mean.
// Bytes is not the Go heap the objects occupy: that adds a roughly fixed
// overhead per object for struct, map and string headers (about 0.8 KB for
// a ConfigMap with one label and one data key, measured on Go structs), and
// saves what the cache shares between objects (namespaces, labels). Use
// Bytes to compare kinds and namespaces and to watch growth; Objects times
// such an overhead plus Bytes is a fair guess at the heap.
//
// Sizes costs nothing between calls: it reads the stores when called,
// holding each store's read lock only to count and to pick the sample,
// and encodes the sample after releasing it. The informers' event path
// does no extra work for it.
func (c *InformerCache) Sizes() []KindSize {
	c.mu.Lock()
	entries := make([]*entry, 0, len(c.entries))
	for _, e := range c.entries {
		entries = append(entries, e)
	}
	c.mu.Unlock()

	var out []KindSize
	for _, e := range entries {
		base := KindSize{Group: e.key.gvk.Group, Version: e.key.gvk.Version, Kind: e.key.gvk.Kind, Shape: e.key.shape.String()}
		n := len(out)
		for _, ni := range e.group.All() {
			out = appendSizes(out, base, ni.Informer.Store().Samples(sizeSamplesPerNamespace, sizeSamplesPerInformer))
		}
		if len(out) == n {
			out = append(out, base)
		}
	}
	slices.SortFunc(out, func(a, b KindSize) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Version, b.Version),
			cmp.Compare(a.Shape, b.Shape), cmp.Compare(a.Namespace, b.Namespace))
	})
	return out
}

// appendSizes appends one KindSize per namespace of samples, on base, to
// out. The objects are encoded here, outside the store's lock.
func appendSizes(out []KindSize, base KindSize, samples []store.Sample) []KindSize {
	var sum, measured int64
	sizes := make([]int64, len(samples))
	for i, ns := range samples {
		for _, obj := range ns.Objects {
			sizes[i] += jsonSize(obj)
		}
		sum += sizes[i]
		measured += int64(len(ns.Objects))
	}
	for i, ns := range samples {
		ks := base
		ks.Namespace, ks.Objects = ns.Namespace, ns.Count
		switch {
		case len(ns.Objects) > 0:
			ks.Bytes = sizes[i] * int64(ns.Count) / int64(len(ns.Objects))
		case measured > 0: // past the informer's budget
			ks.Bytes = sum * int64(ns.Count) / measured
		}
		out = append(out, ks)
	}
	return out
}

// jsonSize returns the length of obj's JSON encoding, 0 if it has none.
func jsonSize(obj any) int64 {
	var w byteCounter
	enc := json.NewEncoder(&w)
	if err := enc.Encode(obj); err != nil {
		return 0
	}
	return int64(w) - 1 // Encode ends with a newline
}

// byteCounter is an io.Writer that counts what it is given.
type byteCounter int64

func (c *byteCounter) Write(p []byte) (int, error) {
	*c += byteCounter(len(p))
	return len(p), nil
}
