package cache

import (
	"errors"

	"github.com/kubeloop/kubeloop/cache/internal/fieldindex"
)

// Sentinel errors. Match them with errors.Is; the errors returned wrap them
// with the kind and object concerned.
var (
	// ErrResourceNotCached is returned by a read of a kind the cache has no
	// informer for when Options.ReaderFailOnMissingInformer is set.
	ErrResourceNotCached = errors.New("cache: kind not cached")
	// ErrCacheNotStarted is returned by a read before Start was called.
	ErrCacheNotStarted = errors.New("cache: not started")
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
