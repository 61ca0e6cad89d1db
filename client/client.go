package client

import (
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// Options configure New. The zero value talks to the API server for every
// read and write, knows every built-in kind and discovers the rest lazily.
type Options struct {
	// Scheme maps Go types to kinds. Nil means a new scheme with every
	// built-in Kubernetes type (k8s.io/client-go/kubernetes/scheme).
	Scheme *runtime.Scheme
	// Mapper maps kinds to resources. Nil means
	// apiutil.NewDynamicRESTMapper(cfg, HTTPClient).
	Mapper meta.RESTMapper
	// HTTPClient carries every request. Nil means rest.HTTPClientFor(cfg).
	HTTPClient *http.Client
	// Cache, when set, serves reads from a cache and writes to the API
	// server, and makes reads see this client's own writes. Nil means every
	// read goes to the API server.
	Cache *CacheOptions
	// FieldOwner is the field manager of writes that set none; "" means
	// the server's default. Apply requires one, here or per call.
	FieldOwner string
}

// CacheOptions make a client read from a cache. See New for the
// read-your-own-writes guarantee.
type CacheOptions struct {
	// Reader is the cache; required when Cache is set.
	Reader Reader
	// Progress, when set, says how far the cache has applied each kind's
	// changes: a read of this client's own write then waits for the
	// cache's next change instead of polling, does not wait for a cache
	// past the write or whose informer is failing, and does not wait for
	// a write outside the cache's scope. Nil means Reader, when Reader
	// implements CacheProgress (a manager's cache does, so
	// CacheOptions{Reader: mgr.GetCache()} behaves as the manager's own
	// client), and otherwise none of this: reads of own writes compare
	// resourceVersions alone. The manager sets it to its cache.
	Progress CacheProgress
	// Shared, when set, is asked by GetShared for the cached object
	// itself, and looked at without a copy while a read waits for this
	// client's own write. Nil means Reader, when Reader implements
	// SharedReader, and otherwise GetShared copies (a Get). The manager
	// sets it to its cache.
	Shared SharedReader
	// DisableFor lists kinds always read from the API server; nil means
	// none.
	DisableFor []Object
	// Unstructured also serves *unstructured.Unstructured reads from the
	// cache; false means they go to the API server.
	Unstructured bool
	// ReadYourOwnWritesTimeout is how long a cached Get waits for the cache
	// to catch up with this client's own write before reading from the API
	// server; 0 means 2 s.
	ReadYourOwnWritesTimeout time.Duration
}

// New returns a client for the API server cfg points at.
//
// Built-in kinds travel as protobuf and custom resources as JSON. When cfg
// sets neither QPS nor a RateLimiter, client-side rate limiting is off:
// the API server's priority and fairness protects it.
//
// With opts.Cache set, Get and List read from opts.Cache.Reader (typed and
// metadata objects, and unstructured ones when opts.Cache.Unstructured is
// set, except the DisableFor kinds) and writes go to the API server. Such a
// client reads its own writes: after a write through it succeeds, a Get of
// the same object answers what the server held after the write, or newer
// (a Delete held by finalizers leaves the object terminating; one that
// removed it answers NotFound). A Get that would break this waits up to
// ReadYourOwnWritesTimeout for the cache, then reads from the API server;
// with opts.Cache.Progress set it does not wait for a cache that is past
// the write, whose informer is failing, or that will never hold the object
// (outside its scope). List is
// not covered: it may return older objects. The package documentation
// has the details.
func New(cfg *rest.Config, opts Options) (Client, error) {
	lc, err := newLive(cfg, opts)
	if err != nil {
		return nil, err
	}
	if opts.Cache == nil {
		return lc, nil
	}
	return newCached(lc, *opts.Cache)
}
