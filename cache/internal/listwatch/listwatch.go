// Package listwatch lists and watches the API server for the cache's
// informers: typed objects through a REST client per group-version
// (protobuf for built-in kinds, decoded by package wire), unstructured
// objects through the dynamic client, metadata through the metadata
// client, every request through health.TrackAnswers.
//
// What it hands the cache is explicit: Factory.ListWatch returns a Source
// (the list-watch and, when its watch decoder shares maps with the
// informer's store, that decoder's StoreView), and Factory.Prober the one
// prober of every informer listing through the factory. The cache names
// both among the parts of each informer's pipeline (informer.Pipeline).
package listwatch

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/cache/internal/backoff"
	"github.com/kubeloop/kubeloop/cache/internal/health"
	"github.com/kubeloop/kubeloop/cache/internal/wire"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// Shape is the Go representation of cached objects.
type Shape uint8

// The shapes.
const (
	Typed        Shape = iota // the scheme's Go structs
	Unstructured              // *unstructured.Unstructured
	Metadata                  // *metav1.PartialObjectMetadata
)

// ShapeOf returns the shape of obj, a single object or a list.
func ShapeOf(obj runtime.Object) Shape {
	switch obj.(type) {
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return Metadata
	case runtime.Unstructured:
		return Unstructured
	}
	return Typed
}

// String names the shape.
func (s Shape) String() string {
	switch s {
	case Unstructured:
		return "unstructured"
	case Metadata:
		return "metadata"
	}
	return "typed"
}

// Request names the list-watch of one kind, shape and namespace.
type Request struct {
	GVK       schema.GroupVersionKind
	Shape     Shape
	Mapping   *meta.RESTMapping
	Namespace string          // "" for all
	Label     labels.Selector // server-side; nil for none
	Field     fields.Selector // server-side; nil for none
	Strip     bool            // skip metadata.managedFields while decoding
	// Share lets a decoded watch event take the label and annotation maps
	// of the object's stored version when they are equal (wire.Stored):
	// only without a user transform, which may modify objects in place.
	// The Source of a typed kind then has a StoreView, to which the
	// informer attaches its store while it runs.
	Share bool
	// Shard is the kind's server-side shardSelector; nil for none.
	Shard ShardSource
}

// Source is what the factory hands the informer of one Request.
type Source struct {
	// ListWatch lists and watches the kind in the request's namespace.
	ListWatch toolscache.ListerWatcher
	// StoreView is the view its watch decoder has of the informer's store;
	// nil when the decoder shares nothing (Request.Share unset, or a shape
	// other than Typed).
	StoreView *StoreView
}

// StoreView is the view one informer's watch decoder has of that
// informer's store: while a store is attached, a decoded watch event of
// the kind in the informer's namespace takes the label and annotation maps
// of the object's stored version when they are equal (wire.Stored). The
// decoder is shared by every informer of a group-version (one REST
// client); each informer's view is its kind and namespace in the
// decoder's wire.Stored.
type StoreView struct {
	stored    *wire.Stored
	gvk       schema.GroupVersionKind
	namespace string
}

// Attach lets the decoder read the store through lookup, which must be
// safe to call from the watch's goroutine, until detach is called.
func (v *StoreView) Attach(lookup func(namespace, name string) (any, bool)) (detach func()) {
	return v.stored.Register(v.gvk, v.namespace, lookup)
}

// Example returns an object of the type the list-watch of gvk in shape
// returns, which its informer stores.
func Example(gvk schema.GroupVersionKind, shape Shape, scheme *runtime.Scheme) (runtime.Object, error) {
	switch shape {
	case Unstructured:
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u, nil
	case Metadata:
		return &metav1.PartialObjectMetadata{}, nil
	}
	obj, err := scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("cache: %s: %w", kinds.String(gvk), err)
	}
	return obj, nil
}

// NewFactory returns a factory over cfg. httpClient nil means one built
// from cfg; either way it sends through health.TrackAnswers.
func NewFactory(cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme) *Factory {
	return &Factory{cfg: rest.CopyConfig(cfg), httpClient: httpClient, scheme: scheme, codecs: serializer.NewCodecFactory(scheme)}
}

// serverFilter applies the request's server-side selectors to opts.
func serverFilter(r Request, opts *metav1.ListOptions) {
	if r.Label != nil && !r.Label.Empty() {
		opts.LabelSelector = r.Label.String()
	}
	if r.Field != nil && !r.Field.Empty() {
		opts.FieldSelector = r.Field.String()
	}
}

// Factory lists and watches a real API server: typed objects
// through a REST client per group-version (protobuf for built-in kinds),
// unstructured objects through the dynamic client, metadata through the
// metadata client. Every client sends through health.TrackAnswers.
type Factory struct {
	cfg        *rest.Config
	httpClient *http.Client
	scheme     *runtime.Scheme
	codecs     serializer.CodecFactory

	mu       sync.Mutex
	tracked  *http.Client // httpClient through answerTracker
	typed    map[typedClientKey]typedClient
	dynamic  dynamic.Interface
	metadata metadata.Interface
	prober   *backoff.Prober
}

// Prober returns the prober of every informer listing and watching
// through f: GET /readyz on the same HTTP client (and connection pool).
// It returns nil if the client cannot be built; the informers then wait
// out their backoff.
func (f *Factory) Prober() *backoff.Prober {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.prober != nil {
		return f.prober
	}
	hc, err := f.clientLocked()
	if err != nil {
		return nil
	}
	u, _, err := rest.DefaultServerUrlFor(f.cfg)
	if err != nil {
		return nil
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/readyz"
	f.prober = backoff.NewProber(backoff.HTTPProbe(hc, u.String()))
	return f.prober
}

// filteredListWatch lists and watches through list and watch, with the
// kind's server-side label and field selectors applied to every request.
func filteredListWatch[L runtime.Object](r Request,
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
) *toolscache.ListWatch {
	list, watchFn = shardFilter(r, list, watchFn)
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			serverFilter(r, &opts)
			return list(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			serverFilter(r, &opts)
			return watchFn(ctx, opts)
		},
	}
}

// ListWatch returns the source of r: its list-watch and, for a typed
// kind with r.Share, its decoder's view of the informer's store.
func (f *Factory) ListWatch(r Request) (Source, error) {
	gvr, ns := r.Mapping.Resource, r.Namespace
	switch r.Shape {
	case Unstructured:
		dc, err := f.dynamicClient()
		if err != nil {
			return Source{}, err
		}
		ri := dc.Resource(gvr).Namespace(ns)
		return Source{ListWatch: filteredListWatch(r, ri.List, ri.Watch)}, nil
	case Metadata:
		mc, err := f.metadataClient()
		if err != nil {
			return Source{}, err
		}
		ri := mc.Resource(gvr).Namespace(ns)
		return Source{ListWatch: filteredListWatch(r, ri.List, ri.Watch)}, nil
	}
	tc, err := f.typedClient(r.GVK, r.Strip, r.Share)
	if err != nil {
		return Source{}, err
	}
	rc, stored := tc.rc, tc.stored
	listGVK := r.GVK.GroupVersion().WithKind(r.GVK.Kind + "List")
	if _, err := f.scheme.New(listGVK); err != nil {
		return Source{}, err
	}
	newList := func() (runtime.Object, error) { return f.scheme.New(listGVK) }
	// Built-in kinds answer in protobuf, which is decoded item by item off
	// the connection (wire.ListDecoder); others in JSON, decoded whole.
	var stream *wire.ListDecoder
	if apiutil.IsBuiltIn(r.GVK) {
		stream = wire.NewListDecoder(f.scheme, listGVK, r.Strip, f.codecs.UniversalDeserializer())
	}
	list := func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		// MaxRetries(0): the informer's own backoff retries a failed LIST.
		// client-go's REST client would otherwise repeat it up to ten
		// times by itself, after every Retry-After: a relist whose
		// resourceVersion the server cannot reach (504 too large, which
		// carries Retry-After: 1) cost 12 LISTs and 44 s before the
		// reflector could list from scratch.
		req := rc.Get().NamespaceIfScoped(ns, ns != "").Resource(gvr.Resource).
			VersionedParams(&opts, metav1.ParameterCodec).MaxRetries(0)
		if stream != nil {
			return stream.List(ctx, req, newList)
		}
		list, err := newList()
		if err != nil {
			return nil, err
		}
		err = req.Do(ctx).Into(list)
		return list, err
	}
	watchFn := func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		opts.Watch = true
		req := rc.Get().NamespaceIfScoped(ns, ns != "").Resource(gvr.Resource).
			VersionedParams(&opts, metav1.ParameterCodec)
		// Built-in kinds: a watch the informer reads on its own goroutine
		// (wire.Events), with the same decoders as client-go's.
		if stream != nil {
			return wire.Watch(ctx, req, tc.ns)
		}
		return req.Watch(ctx)
	}
	src := Source{ListWatch: filteredListWatch(r, list, watchFn)}
	if stored != nil {
		src.StoreView = &StoreView{stored: stored, gvk: r.GVK, namespace: ns}
	}
	return src, nil
}

// typedClient returns the REST client of gvk's group-version. Its watches
// decode protobuf in place (wire.NewWatchSerializer), skipping managedFields when
// strip is set and, with share, sharing the maps of the stores registered
// in the returned wire.Stored.
func (f *Factory) typedClient(gvk schema.GroupVersionKind, strip, share bool) (typedClient, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := typedClientKey{gv: gvk.GroupVersion(), strip: strip, share: share}
	if tc, ok := f.typed[k]; ok {
		return tc, nil
	}
	httpClient, err := f.clientLocked()
	if err != nil {
		return typedClient{}, err
	}
	var stored *wire.Stored
	if share {
		stored = &wire.Stored{}
	}
	c := apiutil.RESTConfigForGVK(gvk, false, f.cfg, f.codecs)
	c.NegotiatedSerializer = wire.NewWatchSerializer(c.NegotiatedSerializer, f.scheme, strip, stored)
	rc, err := rest.RESTClientForConfigAndClient(c, httpClient)
	if err != nil {
		return typedClient{}, err
	}
	if f.typed == nil {
		f.typed = make(map[typedClientKey]typedClient)
	}
	tc := typedClient{rc: rc, stored: stored, ns: c.NegotiatedSerializer}
	f.typed[k] = tc
	return tc, nil
}

// typedClientKey names a typed REST client: one per group-version,
// managedFields handling and map sharing.
type typedClientKey struct {
	gv    schema.GroupVersion
	strip bool
	share bool
}

// typedClient is a typed REST client, the stores its watches share
// maps with (nil without sharing) and its negotiated serializer.
type typedClient struct {
	rc     rest.Interface
	stored *wire.Stored
	ns     runtime.NegotiatedSerializer
}

// clientLocked returns the HTTP client of every list and watch: the one
// given in Options (its connections are shared with the manager's client)
// or one built from the config, sending through answerTracker. The caller
// holds f.mu.
func (f *Factory) clientLocked() (*http.Client, error) {
	if f.tracked != nil {
		return f.tracked, nil
	}
	hc := f.httpClient
	if hc == nil {
		var err error
		if hc, err = rest.HTTPClientFor(f.cfg); err != nil {
			return nil, err
		}
	}
	f.tracked = health.TrackAnswers(hc)
	return f.tracked, nil
}

func (f *Factory) dynamicClient() (dynamic.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dynamic == nil {
		hc, err := f.clientLocked()
		if err != nil {
			return nil, err
		}
		dc, err := dynamic.NewForConfigAndClient(f.cfg, hc)
		if err != nil {
			return nil, err
		}
		f.dynamic = dc
	}
	return f.dynamic, nil
}

func (f *Factory) metadataClient() (metadata.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.metadata == nil {
		hc, err := f.clientLocked()
		if err != nil {
			return nil, err
		}
		mc, err := metadata.NewForConfigAndClient(f.cfg, hc)
		if err != nil {
			return nil, err
		}
		f.metadata = mc
	}
	return f.metadata, nil
}

// RESTMapping maps gvk to its resource, giving up when ctx ends. A
// RESTMapper takes no context, and the first question about a group runs
// discovery, so the mapper runs on a goroutine of its own: a caller whose
// context ends returns at once, and the discovery request it started
// finishes in the background (within the HTTP client's timeout), its
// answer kept by the mapper for the next caller.
func RESTMapping(ctx context.Context, mapper meta.RESTMapper, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		mapping *meta.RESTMapping
		err     error
	}
	done := make(chan result, 1)
	go func() {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		done <- result{m, err}
	}()
	select {
	case r := <-done:
		return r.mapping, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("map the kind to a resource: %w", ctx.Err())
	}
}
