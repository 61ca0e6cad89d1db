package fake

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/client/fake/internal/fanout"
	"github.com/kubeloop/kubeloop/client/fake/internal/fieldowner"
	"github.com/kubeloop/kubeloop/client/fake/internal/objmap"
	"github.com/kubeloop/kubeloop/client/fake/internal/scope"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// Client is an in-memory client.Client. It is safe for concurrent use.
type Client struct {
	scheme      *runtime.Scheme
	kinds       *scope.Kinds // scopes, resources, status and generation of kinds
	indexes     map[indexKey]client.IndexerFunc
	keepManaged bool // WithReturnManagedFields: Create keeps managedFields

	mu      sync.Mutex
	rv      uint64
	objects map[schema.GroupKind]map[client.ObjectKey]map[string]any
	owners  fieldowner.Table[objectID] // who applied or wrote which field
	hub     fanout.Hub                 // watchers and recent changes (store.go notifies)
}

type indexKey struct {
	gk    schema.GroupKind
	field string
}

type objectID struct {
	gk  schema.GroupKind
	key client.ObjectKey
}

var _ client.Client = (*Client)(nil)

// newClient returns an empty client of s and kinds.
func newClient(s *runtime.Scheme, kinds *scope.Kinds) *Client {
	return &Client{scheme: s, kinds: kinds, indexes: map[indexKey]client.IndexerFunc{},
		objects: map[schema.GroupKind]map[client.ObjectKey]map[string]any{}}
}

// Scheme returns the client's scheme.
func (c *Client) Scheme() *runtime.Scheme { return c.scheme }

// RESTMapper returns the client's REST mapper.
func (c *Client) RESTMapper() meta.RESTMapper { return c.kinds.RESTMapper() }

// GroupVersionKindFor returns the kind of obj.
func (c *Client) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return apiutil.GVKForObject(obj, c.scheme)
}

// IsObjectNamespaced reports whether obj's kind is namespaced.
func (c *Client) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return false, err
	}
	return apiutil.IsGVKNamespaced(gvk, c.kinds.RESTMapper())
}

// opError formats errors the way the real client does; isNil refuses what
// it refuses (both live in internal/kinds).
var (
	opError = kinds.OpError
	isNil   = kinds.IsNil
)

// resolve finds obj's kind and checks its key like the real client.
func (c *Client) resolve(verb string, obj runtime.Object, ns, name string) (schema.GroupVersionKind, error) {
	if isNil(obj) {
		return schema.GroupVersionKind{}, fmt.Errorf("%s %T: %w", verb, obj, client.ErrNilObject)
	}
	gvk, err := c.gvkOf(obj)
	if err != nil {
		return gvk, fmt.Errorf("%s %T %s: %w", verb, obj, strings.Trim(ns+"/"+name, "/"), err)
	}
	// A namespace given for a cluster-scoped kind is ignored, in reads and
	// writes alike, as the API server does. A namespaced object without a
	// namespace is kept under "" and found there, as controller-runtime's
	// fake does (unit tests seed and read such objects); the live client
	// refuses it (ErrNamespaceRequired), as the API server would.
	namespaced := c.kinds.Namespaced(gvk, ns) && ns != ""
	return gvk, kinds.CheckKey(verb, gvk, namespaced, ns, name)
}

// keyFor returns the stored key, dropping the namespace of cluster-scoped
// kinds as the API server does.
func (c *Client) keyFor(gvk schema.GroupVersionKind, ns, name string) client.ObjectKey {
	if !c.kinds.Namespaced(gvk, ns) {
		ns = ""
	}
	return client.ObjectKey{Namespace: ns, Name: name}
}

// listKind returns the item kind of a list, watch or delete collection
// (verb) of obj, refusing what the real client refuses, and drops the
// namespace in o when the kind is cluster-scoped, as the real client
// never sends it.
func (c *Client) listKind(verb string, obj runtime.Object, o *client.ListOptions) (schema.GroupVersionKind, error) {
	if isNil(obj) {
		return schema.GroupVersionKind{}, fmt.Errorf("%s %T: %w", verb, obj, client.ErrNilObject)
	}
	gvk, err := c.gvkOf(obj)
	if err != nil {
		return gvk, fmt.Errorf("%s %T: %w", verb, obj, err)
	}
	if o.Namespace != "" && !c.kinds.Namespaced(gvk, o.Namespace) {
		o.Namespace = ""
	}
	return gvk, nil
}

func (c *Client) stored(gk schema.GroupKind, key client.ObjectKey) map[string]any {
	return c.objects[gk][key]
}

// Get fills obj with the stored object named by key.
func (c *Client) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	gvk, err := c.resolve("get", obj, key.Namespace, key.Name)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.stored(gvk.GroupKind(), c.keyFor(gvk, key.Namespace, key.Name))
	if m == nil {
		return opError("get", gvk, key.Namespace, key.Name, notFound(c.kinds.GroupResource(gvk), key.Name))
	}
	return opError("get", gvk, key.Namespace, key.Name, objmap.Into(m, obj, gvk))
}
