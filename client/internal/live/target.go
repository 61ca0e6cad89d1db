// Package live is the client's REST machinery: requests to the API server
// for typed, unstructured and metadata-only objects, their subresources,
// server-side apply and watches. It speaks the API server's language: its
// methods take the metav1 option structs the package client builds from
// its options, and client's types wrap it.
//
// Guarantees:
//   - Errors name the verb and the object ("get apps/v1, Kind=Deployment
//     default/web: ..."), through internal/kinds, the one home of the
//     format; the API server's status error stays reachable.
//   - Bad input is an error, never a panic: a nil object (ErrNilObject), a
//     type the scheme does not know, a missing name or namespace, an
//     invalid selector (SelectorError).
//   - Built-in types travel as protobuf, custom resources as JSON,
//     metadata-only objects through the metadata protocol; one REST client
//     is made per group version and form, on first use.
//   - Every write asks the context's fence (client/internal/fence) just
//     before its request is sent; reads are never fenced.
//   - A failed read leaves the caller's object untouched; a successful one
//     clears it first, so no stale field survives.
package live

import (
	"errors"
	"fmt"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/client/internal/tracehttp"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// Object is a Kubernetes object (client.Object).
type Object interface {
	metav1.Object
	runtime.Object
}

// ObjectList is a list of Objects (client.ObjectList).
type ObjectList interface {
	metav1.ListInterface
	runtime.Object
}

// Patch is a patch for an object (client.Patch).
type Patch interface {
	Type() types.PatchType
	Data(obj Object) ([]byte, error)
}

// Errors of bad input; package client exports them.
var (
	ErrNilObject        = errors.New("client: object is nil")
	ErrNotSupported     = errors.New("client: not supported")
	ErrDeleteEverything = errors.New("client: DeleteAllOf with no namespace and no label or field selector would delete every object of the kind; pass client.DeleteEverything to mean it")
)

// Client sends requests to one API server. It is safe for concurrent use.
type Client struct {
	cfg        *rest.Config
	httpClient *http.Client
	scheme     *runtime.Scheme
	codecs     serializer.CodecFactory
	mapper     meta.RESTMapper
	metadata   metadata.Interface

	mu      sync.Mutex
	clients map[clientKey]rest.Interface
}

type clientKey struct {
	gv           schema.GroupVersion
	unstructured bool
}

// New returns a Client for the API server cfg points at. A nil scheme
// means every built-in type, a nil mapper a dynamic one, a nil hc
// rest.HTTPClientFor(cfg). When cfg sets neither QPS nor a RateLimiter,
// client-side rate limiting is off.
func New(cfg *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper, hc *http.Client) (*Client, error) {
	if cfg == nil {
		return nil, errors.New("client: rest.Config is nil")
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS = -1
	}
	c := &Client{cfg: cfg, httpClient: hc, scheme: scheme, mapper: mapper, clients: map[clientKey]rest.Interface{}}
	var err error
	if c.httpClient == nil {
		if c.httpClient, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
	}
	if c.scheme == nil {
		c.scheme = runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(c.scheme); err != nil {
			return nil, fmt.Errorf("client: build scheme: %w", err)
		}
	}
	c.codecs = serializer.NewCodecFactory(c.scheme)
	if c.mapper == nil {
		if c.mapper, err = apiutil.NewDynamicRESTMapper(cfg, c.httpClient); err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
	}
	c.httpClient = tracehttp.Wrap(c.httpClient) // spans for requests under a traced context
	if c.metadata, err = metadata.NewForConfigAndClient(cfg, c.httpClient); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return c, nil
}

// Scheme returns the client's scheme.
func (c *Client) Scheme() *runtime.Scheme { return c.scheme }

// RESTMapper returns the client's mapper.
func (c *Client) RESTMapper() meta.RESTMapper { return c.mapper }

// target is what a request needs about an object's kind: every request
// path (live, metadata, subresources) starts here.
type target struct {
	gvk        schema.GroupVersionKind // the object's kind, never a List kind
	resource   string
	namespaced bool
	metadata   bool           // use the metadata client
	rc         rest.Interface // nil when metadata
}

func (t *target) gvr() schema.GroupVersionResource {
	return t.gvk.GroupVersion().WithResource(t.resource)
}

// request starts a request for t in ns (ignored for cluster-scoped kinds)
// on name (none for collections).
func (t *target) request(r *rest.Request, ns, name string) *rest.Request {
	r = r.NamespaceIfScoped(ns, t.namespaced).Resource(t.resource)
	if name != "" {
		r = r.Name(name)
	}
	return r
}

// check validates the namespace and name of one object, in a key or in
// the metadata of an object that verb writes. A namespace given for a
// cluster-scoped kind is ignored: requests never carry it in their path,
// and the API server clears it from a written object (so the object the
// caller passed comes back without it).
func (t *target) check(verb, ns, name string) error {
	return kinds.CheckKey(verb, t.gvk, t.namespaced, ns, name)
}

// targetFor resolves obj's kind (a list's item kind for lists). Its errors
// name verb and the object: by kind when known, else by Go type.
func (c *Client) targetFor(verb string, obj runtime.Object, ns, name string) (*target, error) {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		if k := kinds.Key(ns, name); k != "" {
			return nil, fmt.Errorf("%s %T %s: %w", verb, obj, k, err)
		}
		return nil, fmt.Errorf("%s %T: %w", verb, obj, err)
	}
	if _, isList := obj.(ObjectList); isList {
		gvk.Kind = kinds.TrimList(gvk.Kind)
	}
	t, err := c.targetForGVK(gvk, apiutil.IsUnstructured(obj), apiutil.IsPartialMetadata(obj))
	if err != nil {
		return nil, kinds.OpError(verb, gvk, ns, name, err)
	}
	return t, nil
}

// checkedTarget is targetFor of a non-nil obj whose key is then checked.
func (c *Client) checkedTarget(verb string, obj Object) (*target, error) {
	if kinds.IsNil(obj) {
		return nil, NilError(verb, obj)
	}
	t, err := c.targetFor(verb, obj, obj.GetNamespace(), obj.GetName())
	if err != nil {
		return nil, err
	}
	if err := t.check(verb, obj.GetNamespace(), obj.GetName()); err != nil {
		return nil, err
	}
	return t, nil
}

func (c *Client) targetForGVK(gvk schema.GroupVersionKind, unstructured, metadataOnly bool) (*target, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	t := &target{gvk: gvk, resource: m.Resource.Resource, namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace, metadata: metadataOnly}
	if metadataOnly {
		return t, nil
	}
	key := clientKey{gv: gvk.GroupVersion(), unstructured: unstructured}
	c.mu.Lock()
	defer c.mu.Unlock()
	if rc, ok := c.clients[key]; ok {
		t.rc = rc
		return t, nil
	}
	rc, err := apiutil.RESTClientForGVK(gvk, unstructured, c.cfg, c.codecs, c.httpClient)
	if err != nil {
		return nil, err
	}
	c.clients[key] = rc
	t.rc = rc
	return t, nil
}

// NilError reports a nil object for verb.
func NilError(verb string, obj runtime.Object) error {
	return fmt.Errorf("%s %T: %w", verb, obj, ErrNilObject)
}
