// Package informer runs the cache's informers: one per kind, shape and
// namespace (Informer), grouped per kind and shape (Group), fanned out to
// handlers over namespaces (Multi).
//
// Every part of an informer is a typed field of its Pipeline, which the
// cache builds in one place: the list-watch and its watch decoder's view
// of the store (StoreView), the health and the gate's policy and prober,
// the transform, resync and mutation detection. New makes the rest: the
// store, the progress and the gate.
//
// Guarantees:
//   - A built-in kind's watch events are decoded, transformed, stored and
//     handed to the handlers on the one goroutine that reads the watch;
//     other kinds' events take one hop from client-go's watch goroutine.
//   - Handlers see every stored object once as an add (isInInitialList
//     true for the initial list, and for a handler added later), then
//     every change, each exactly once and in order.
//   - The store is attached to the StoreView only while the informer runs.
//   - RunWithContext returns after every goroutine it started has exited.
package informer
