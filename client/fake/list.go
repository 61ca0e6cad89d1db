package fake

import (
	"context"
	"fmt"
	"slices"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/client/fake/internal/fanout"
	"github.com/kubeloop/kubeloop/client/fake/internal/objmap"
)

// List fills list with the stored objects that match opts, sorted by
// namespace and name.
func (c *Client) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	gvk, err := c.listKind("list", list, o)
	if err != nil {
		return err
	}
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
		item, err := objmap.Item(c.scheme, list, gvk)
		if err != nil {
			return opError("list", gvk, o.Namespace, "", err)
		}
		if err := objmap.Into(c.objects[gvk.GroupKind()][k], item, gvk); err != nil {
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

var _ client.WithWatch = (*Client)(nil)

// Watch watches the objects of list's item kind that opts select, like the
// API server: without a resourceVersion (Raw.ResourceVersion "" or "0")
// it first sends an ADDED event for every existing match, then every
// change; with a resourceVersion (from a List) it sends the changes after
// it, or answers 410 Gone when the fake's history (the last 1,024 writes)
// no longer reaches back that far. An object modified into or out of the
// selection arrives as ADDED or DELETED. Objects are of list's item type.
// The watch ends when Stop is called or ctx ends; events are never
// dropped, and a watcher that is not read never blocks writers.
func (c *Client) Watch(ctx context.Context, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	gvk, err := c.listKind("watch", list, o)
	if err != nil {
		return nil, err
	}
	sel, err := c.selector(gvk, o)
	if err != nil {
		return nil, opError("watch", gvk, o.Namespace, "", err)
	}
	sel.list = list
	var rv string
	if o.Raw != nil {
		rv = o.Raw.ResourceVersion
	}
	// Listing (or replaying) and registering under mu: no write between.
	c.mu.Lock()
	defer c.mu.Unlock()
	if rv == "" || rv == "0" {
		keys, err := sel.keys()
		if err != nil {
			return nil, opError("watch", gvk, o.Namespace, "", err)
		}
		existing := make([]map[string]any, len(keys))
		for i, k := range keys {
			existing[i] = c.objects[gvk.GroupKind()][k]
		}
		return c.hub.Watch(ctx, gvk.GroupKind(), sel, existing), nil
	}
	from, ok := objmap.ParseRV(rv)
	if !ok {
		return nil, opError("watch", gvk, o.Namespace, "", apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q", rv)))
	}
	w, err := c.hub.WatchFrom(ctx, gvk.GroupKind(), sel, from, c.rv)
	if err != nil {
		return nil, opError("watch", gvk, o.Namespace, "", err)
	}
	return w, nil
}

// selector is the selection of a List, Watch or DeleteAllOf: a
// namespace, a label selector and a field selector on metadata.name,
// metadata.namespace and the fields of WithIndex. As a fanout.View it
// also converts objects to the items of list (when it is a watch's).
type selector struct {
	c    *Client
	gvk  schema.GroupVersionKind
	ns   string
	lbl  labels.Selector
	reqs fields.Requirements
	list client.ObjectList
}

var _ fanout.View = (*selector)(nil)

// selector checks o's selectors like the API server and returns the
// selection of gvk's objects they make.
func (c *Client) selector(gvk schema.GroupVersionKind, o *client.ListOptions) (*selector, error) {
	if err := client.InvalidSelectorError(o.LabelSelector); err != nil {
		return nil, fmt.Errorf("invalid label selector: %w", err)
	}
	s := &selector{c: c, gvk: gvk, ns: o.Namespace, lbl: o.LabelSelector}
	if o.FieldSelector != nil {
		s.reqs = o.FieldSelector.Requirements()
	}
	for _, r := range s.reqs {
		if r.Field == "metadata.name" || r.Field == "metadata.namespace" {
			continue
		}
		if _, ok := c.indexes[indexKey{gk: gvk.GroupKind(), field: r.Field}]; !ok {
			return nil, fmt.Errorf("field selector %q: no index for field %q (add one with WithIndex)", o.FieldSelector, r.Field)
		}
	}
	return s, nil
}

// match returns the sorted keys of gvk's stored objects that o selects.
// Caller holds mu.
func (c *Client) match(gvk schema.GroupVersionKind, o *client.ListOptions) ([]client.ObjectKey, error) {
	s, err := c.selector(gvk, o)
	if err != nil {
		return nil, err
	}
	return s.keys()
}

// keys returns the sorted keys of the stored objects s selects. Caller
// holds mu.
func (s *selector) keys() ([]client.ObjectKey, error) {
	var keys []client.ObjectKey
	for k, m := range s.c.objects[s.gvk.GroupKind()] {
		ok, err := s.selects(k, m)
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

// Selects reports whether m, the object at key, is in the selection
// (fanout.View); an unsupported field selector operator selects nothing.
func (s *selector) Selects(key client.ObjectKey, m map[string]any) bool {
	ok, err := s.selects(key, m)
	return err == nil && ok
}

// Object converts m to an item of the watched list (fanout.View).
func (s *selector) Object(m map[string]any) (runtime.Object, error) {
	item, err := objmap.Item(s.c.scheme, s.list, s.gvk)
	if err != nil {
		return nil, err
	}
	return item, objmap.Into(m, item, s.gvk)
}

func (s *selector) selects(key client.ObjectKey, m map[string]any) (bool, error) {
	if s.ns != "" && key.Namespace != s.ns {
		return false, nil
	}
	if s.lbl != nil && !s.lbl.Matches(labels.Set(objmap.Meta(m).GetLabels())) {
		return false, nil
	}
	for _, r := range s.reqs {
		var values []string
		switch r.Field {
		case "metadata.name":
			values = []string{key.Name}
		case "metadata.namespace":
			values = []string{key.Namespace}
		default:
			obj, err := objmap.Typed(s.c.scheme, s.gvk, m)
			if err != nil {
				return false, err
			}
			values = s.c.indexes[indexKey{gk: s.gvk.GroupKind(), field: r.Field}](obj)
		}
		found := slices.Contains(values, r.Value)
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

func keyString(k client.ObjectKey) string { return k.Namespace + "/" + k.Name }
