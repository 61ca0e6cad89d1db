// Package cachesize turns a cache's sizes (cache.InformerCache's Sizes)
// into the manager's kubeloop_cache_objects and kubeloop_cache_bytes
// metrics and its /debug/cache endpoint.
//
// Guarantees:
//   - The cache is read when the registry is gathered or the endpoint
//     asked, never per event.
//   - The metrics have one series per group, version, kind and shape
//     (typed, unstructured, metadata), summed over namespaces, so their
//     number does not grow with the cluster's namespaces; the endpoint has
//     one entry per namespace too.
//   - kubeloop_cache_objects is exact; kubeloop_cache_bytes is the
//     approximate size as JSON without managedFields, not the Go heap.
//   - The endpoint answers GET and HEAD only (405 with Allow otherwise), a
//     JSON array (never null) in the order Sizes gives, filtered by
//     ?namespace= (also the empty namespace of cluster-scoped kinds) and
//     ?kind=; 404 without a Sizer.
package cachesize
