// Package probe timestamps an event's way from the watch's read to the
// reconcile that sees it, at fixed points of kubeloop's path, for the
// end-to-end benchmark's latency phase (bench/e2e, BENCHMARKS-perf.md).
//
// Built without the kubeloop_probe build tag, as always but for that
// measurement, Mark is an empty function that the compiler inlines
// away: the calls at the points cost nothing and change no code. Built
// with it (`go test -tags kubeloop_probe`), Mark stores the monotonic time
// of the point reached last; Take reads and clears them. The probe keeps
// one time per point, not one per event, so it measures events that
// travel one at a time, as the latency phase sends them.
package probe

// Point is a place on the path from a watch's read to a reconcile.
type Point uint8

// The points, in the order an event reaches them.
const (
	// Read: a watch frame has been read (the kubeloop wire decoder; the
	// floor consumer's reader).
	Read Point = iota
	// Decoded: the frame is a watch.Event with its object.
	Decoded
	// Looked: the informer has looked up the object the event replaces.
	Looked
	// Transformed: the cache's transform has run.
	Transformed
	// Stored: the store holds the event's object.
	Stored
	// Handled: the event handlers have run (the key is queued).
	Handled
	// Yield: the reader is done with the event (kubeloop: before its
	// Gosched; the floor: before its hand-off to its worker).
	Yield
	// Taken: a worker has taken the key from the queue.
	Taken
	// Context: the worker is about to make the reconcile's context.
	Context
	// Reconcile: the reconciler has been called.
	Reconcile
	// CacheGet: the client is about to read the cache.
	CacheGet
	// Found: the cache has found the object, before its deep copy.
	Found
	// Observed: the reconciler has the copy (the benchmark's observation).
	Observed
	// NumPoints is the number of points.
	NumPoints
)

var names = [NumPoints]string{"read", "decoded", "looked", "transformed", "stored", "handled", "yield", "taken", "context", "reconcile", "cache-get", "found", "observed"}

// String returns the point's name.
func (p Point) String() string {
	if p < NumPoints {
		return names[p]
	}
	return "point(?)"
}
