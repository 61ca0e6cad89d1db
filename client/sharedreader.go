package client

import (
	"context"
)

// The client's view of a cache: a Reader (CacheOptions.Reader), and what
// it may say beyond reading (CacheOptions.Progress, CacheOptions.Shared).
// The manager sets all three to its cache; a client given a Reader alone
// reads its own writes by comparing resourceVersions, and GetShared
// through it copies.

// SharedReader is a Reader that can hand out the objects it holds in memory
// without copying them. The cache and the manager's client are
// SharedReaders; GetShared uses the method when a reader has it.
type SharedReader interface {
	Reader
	// GetShared returns the object named by key, of obj's kind, as the
	// reader holds it: no copy is made, so it is shared with the reader
	// and every other caller and must not be modified. obj only names the
	// kind and is not filled; for a typed kind a nil pointer does, for
	// unstructured and metadata-only kinds it carries apiVersion and kind.
	// A missing object is an apierrors NotFound.
	GetShared(ctx context.Context, key ObjectKey, obj Object) (Object, error)
}

// CacheProgress is what the manager's client asks of its cache, beyond
// Reader, to read its own writes without needless waits
// (CacheOptions.Progress). The cache package's InformerCache implements
// it; without it the client compares resourceVersions alone.
type CacheProgress interface {
	// ObservedVersion returns the resourceVersion (an etcd revision) up to
	// which the cache has applied every change of obj's kind in namespace
	// ns, and ok false when it cannot say because its informer for them is
	// missing, unsynced or failing.
	ObservedVersion(obj Object, ns string) (rv uint64, ok bool)
	// WaitForVersion blocks until ObservedVersion(obj, ns) is at least rv,
	// and reports whether it got there before ctx ended; false at once
	// where ObservedVersion answers ok false. A read of the client's own
	// write that finds the cache behind waits here, woken by the cache's
	// next change of the kind, instead of polling.
	WaitForVersion(ctx context.Context, obj Object, ns string, rv uint64) bool
	// Holds reports whether the cache would hold obj as it is (kind,
	// namespace, labels and fields in the cache's scope). It answers true
	// where it cannot tell.
	Holds(obj Object) bool
}
