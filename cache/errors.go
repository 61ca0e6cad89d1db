package cache

import (
	"errors"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/cache/internal/fieldindex"
)

// ErrResourceNotCached is returned, wrapped with the object concerned, by
// a read of a kind the cache has no informer for when
// Options.ReaderFailOnMissingInformer is set. It is controller-runtime's
// type: errors.As(err, &cache.ErrResourceNotCached{}) gives the kind, and
// errors.Is(err, cache.ErrResourceNotCached{}) matches any kind.
type ErrResourceNotCached struct {
	// GVK is the kind that is not cached.
	GVK schema.GroupVersionKind
}

// Error says which kind is not cached.
func (e ErrResourceNotCached) Error() string {
	if e.GVK.Empty() {
		return "cache: kind not cached"
	}
	return "cache: " + e.GVK.String() + " is not cached"
}

// Is matches every ErrResourceNotCached, whatever its kind.
func (ErrResourceNotCached) Is(target error) bool {
	_, ok := target.(ErrResourceNotCached)
	return ok
}

// ErrCacheNotStarted is returned, wrapped with the object concerned, by a
// read before Start was called. It is controller-runtime's type: match it
// with errors.Is(err, &cache.ErrCacheNotStarted{}) or errors.As.
type ErrCacheNotStarted struct{}

// Error says the cache is not started.
func (*ErrCacheNotStarted) Error() string { return "cache: not started" }

// Is matches every *ErrCacheNotStarted (pointers to an empty struct need
// not be equal).
func (*ErrCacheNotStarted) Is(target error) bool {
	_, ok := target.(*ErrCacheNotStarted)
	return ok
}

// Sentinel errors. Match them with errors.Is; the errors returned wrap them
// with the kind and object concerned.
var (
	// ErrCacheStopped is returned by a read after Start has returned.
	ErrCacheStopped = errors.New("cache: stopped")
	// ErrNamespaceNotCached is returned by a read in a namespace the cache
	// does not watch for that kind.
	ErrNamespaceNotCached = errors.New("cache: namespace not cached")
	// ErrUnsupportedSelector is returned by a List whose field selector the
	// cache cannot answer: only exact matches on indexed fields are served
	// (plus metadata.name and metadata.namespace).
	ErrUnsupportedSelector = fieldindex.ErrUnsupported
)
