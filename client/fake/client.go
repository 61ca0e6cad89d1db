package fake

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// Client is an in-memory client.Client. It is safe for concurrent use.
type Client struct {
	scheme *runtime.Scheme
	mapper meta.RESTMapper           // what RESTMapper returns
	scopes meta.RESTMapper           // the kinds whose scope is known (mapper.go)
	status map[schema.GroupKind]bool // kinds with a status subresource
	// noGeneration holds the built-in kinds without metadata.generation.
	noGeneration map[schema.GroupKind]bool
	indexes      map[indexKey]client.IndexerFunc
	keepManaged  bool // WithReturnManagedFields: Create keeps managedFields

	mu      sync.Mutex
	rv      uint64
	objects map[schema.GroupKind]map[client.ObjectKey]map[string]any
	owners  map[objectID]map[string]string // apply field path -> manager
	hub     watchHub                       // watchers and recent changes (watch.go)
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

// newClient returns an empty client of s; user (WithRESTMapper's) and crds
// (the definitions given to the builder) may be nil.
func newClient(s *runtime.Scheme, user, crds meta.RESTMapper) *Client {
	builtIn, others := schemeMappers(s)
	var scopes firstMapper
	for _, m := range []meta.RESTMapper{user, crds} {
		if m != nil {
			scopes = append(scopes, m)
		}
	}
	scopes = append(scopes, builtIn)
	mapper := append(firstMapper{}, scopes...)
	mapper = append(mapper, others)
	return &Client{scheme: s, mapper: mapper, scopes: scopes, indexes: map[indexKey]client.IndexerFunc{},
		objects: map[schema.GroupKind]map[client.ObjectKey]map[string]any{}, owners: map[objectID]map[string]string{}}
}

// Scheme returns the client's scheme.
func (c *Client) Scheme() *runtime.Scheme { return c.scheme }

// RESTMapper returns the client's REST mapper.
func (c *Client) RESTMapper() meta.RESTMapper { return c.mapper }

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
	return apiutil.IsGVKNamespaced(gvk, c.mapper)
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
	namespaced := c.namespaced(gvk, ns) && ns != ""
	return gvk, kinds.CheckKey(verb, gvk, namespaced, ns, name)
}

// keyFor returns the stored key, dropping the namespace of cluster-scoped
// kinds as the API server does.
func (c *Client) keyFor(gvk schema.GroupVersionKind, ns, name string) client.ObjectKey {
	if !c.namespaced(gvk, ns) {
		ns = ""
	}
	return client.ObjectKey{Namespace: ns, Name: name}
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
		return opError("get", gvk, key.Namespace, key.Name, notFound(c.groupResource(gvk), key.Name))
	}
	return opError("get", gvk, key.Namespace, key.Name, c.fromMap(m, obj, gvk))
}

// List fills list with the stored objects that match opts, sorted by
// namespace and name.
func (c *Client) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if isNil(list) {
		return fmt.Errorf("list %T: %w", list, client.ErrNilObject)
	}
	gvk, err := c.gvkOf(list)
	if err != nil {
		return fmt.Errorf("list %T: %w", list, err)
	}
	o := (&client.ListOptions{}).ApplyOptions(opts)
	c.listScope(gvk, o)
	c.mu.Lock()
	defer c.mu.Unlock()
	keys, err := c.match(gvk, o)
	if err != nil {
		return opError("list", gvk, o.Namespace, "", err)
	}
	next := ""
	if o.Continue != "" {
		i := sort.Search(len(keys), func(i int) bool { return keyString(keys[i]) > o.Continue })
		keys = keys[i:]
	}
	if o.Limit > 0 && int64(len(keys)) > o.Limit {
		keys = keys[:o.Limit]
		next = keyString(keys[len(keys)-1])
	}
	items := make([]runtime.Object, 0, len(keys))
	for _, k := range keys {
		item, err := c.newItem(list, gvk)
		if err != nil {
			return opError("list", gvk, o.Namespace, "", err)
		}
		if err := c.fromMap(c.objects[gvk.GroupKind()][k], item, gvk); err != nil {
			return opError("list", gvk, o.Namespace, "", err)
		}
		items = append(items, item)
	}
	listGVK := list.GetObjectKind().GroupVersionKind()
	if err := meta.SetList(list, items); err != nil {
		return opError("list", gvk, o.Namespace, "", err)
	}
	list.SetResourceVersion(fmt.Sprint(c.rv))
	list.SetContinue(next)
	if apiutil.IsUnstructured(list) || apiutil.IsPartialMetadata(list) {
		list.GetObjectKind().SetGroupVersionKind(listGVK)
	}
	return nil
}

func keyString(k client.ObjectKey) string { return k.Namespace + "/" + k.Name }

// newItem returns an empty item for list.
func (c *Client) newItem(list client.ObjectList, gvk schema.GroupVersionKind) (client.Object, error) {
	switch list.(type) {
	case *unstructured.UnstructuredList:
		return &unstructured.Unstructured{}, nil
	case *metav1.PartialObjectMetadataList:
		return &metav1.PartialObjectMetadata{}, nil
	}
	obj, err := c.scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	o, ok := obj.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%T is not a client.Object", obj)
	}
	return o, nil
}

// match returns the sorted keys of gvk's objects that o selects. Caller
// holds mu.
func (c *Client) match(gvk schema.GroupVersionKind, o *client.ListOptions) ([]client.ObjectKey, error) {
	if err := client.InvalidSelectorError(o.LabelSelector); err != nil {
		return nil, fmt.Errorf("invalid label selector: %w", err)
	}
	var reqs fields.Requirements
	if o.FieldSelector != nil {
		reqs = o.FieldSelector.Requirements()
		for _, r := range reqs {
			if r.Field == "metadata.name" || r.Field == "metadata.namespace" {
				continue
			}
			if _, ok := c.indexes[indexKey{gk: gvk.GroupKind(), field: r.Field}]; !ok {
				return nil, fmt.Errorf("field selector %q: no index for field %q (add one with WithIndex)", o.FieldSelector, r.Field)
			}
		}
	}
	var keys []client.ObjectKey
	for k, m := range c.objects[gvk.GroupKind()] {
		if o.Namespace != "" && k.Namespace != o.Namespace {
			continue
		}
		if o.LabelSelector != nil && !o.LabelSelector.Matches(labels.Set(metaOf(m).GetLabels())) {
			continue
		}
		ok, err := c.matchFields(gvk, k, m, reqs)
		if err != nil {
			return nil, err
		}
		if ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keyString(keys[i]) < keyString(keys[j]) })
	return keys, nil
}

func (c *Client) matchFields(gvk schema.GroupVersionKind, k client.ObjectKey, m map[string]any, reqs fields.Requirements) (bool, error) {
	for _, r := range reqs {
		var values []string
		switch r.Field {
		case "metadata.name":
			values = []string{k.Name}
		case "metadata.namespace":
			values = []string{k.Namespace}
		default:
			obj, err := c.typed(gvk, m)
			if err != nil {
				return false, err
			}
			values = c.indexes[indexKey{gk: gvk.GroupKind(), field: r.Field}](obj)
		}
		found := false
		for _, v := range values {
			if v == r.Value {
				found = true
				break
			}
		}
		switch r.Operator {
		case selection.Equals, selection.DoubleEquals:
			if !found {
				return false, nil
			}
		case selection.NotEquals:
			if found {
				return false, nil
			}
		default:
			return false, fmt.Errorf("field selector operator %q is not supported", r.Operator)
		}
	}
	return true, nil
}

// typed returns m as the Go type the scheme has for gvk, or unstructured.
func (c *Client) typed(gvk schema.GroupVersionKind, m map[string]any) (client.Object, error) {
	var obj client.Object = &unstructured.Unstructured{}
	if c.scheme.Recognizes(gvk) {
		o, err := c.scheme.New(gvk)
		if err != nil {
			return nil, err
		}
		var ok bool
		if obj, ok = o.(client.Object); !ok {
			return nil, fmt.Errorf("%T is not a client.Object", o)
		}
	}
	return obj, c.fromMap(m, obj, gvk)
}
