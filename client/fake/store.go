package fake

import (
	"math/rand/v2"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/client/fake/internal/fanout"
	"github.com/kubeloop/kubeloop/client/fake/internal/objmap"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// The store keeps every object in objmap's form (a JSON-like map), by
// group and kind, then by namespace and name. A stored map is never
// modified: a write stores a new one. Reads convert a deep copy into the
// caller's type, so no caller ever shares memory with the store. Every
// write goes through put or remove, which tell the watchers (c.hub).

// put stores m under key and tells the watchers. Caller holds mu.
func (c *Client) put(gk schema.GroupKind, key client.ObjectKey, m map[string]any) {
	if c.objects[gk] == nil {
		c.objects[gk] = map[client.ObjectKey]map[string]any{}
	}
	old := c.objects[gk][key]
	c.objects[gk][key] = m
	c.notify(gk, key, old, m)
}

// remove deletes key and tells the watchers. Caller holds mu.
func (c *Client) remove(gk schema.GroupKind, key client.ObjectKey) {
	old := c.objects[gk][key]
	delete(c.objects[gk], key)
	c.owners.Forget(objectID{gk: gk, key: key})
	if old != nil {
		c.notify(gk, key, old, nil)
	}
}

// notify hands a change to the watchers. A delete gets a resourceVersion
// of its own, as on the API server. Caller holds mu.
func (c *Client) notify(gk schema.GroupKind, key client.ObjectKey, old, cur map[string]any) {
	ch := fanout.Change{GK: gk, Key: key, Old: old, Cur: cur}
	if cur == nil {
		ch.Old = objmap.DeepCopy(old)
		objmap.Meta(ch.Old).SetResourceVersion(c.nextRV())
	}
	ch.RV = c.rv
	if cur != nil {
		if rv, ok := objmap.ParseRV(objmap.Meta(cur).GetResourceVersion()); ok {
			ch.RV = rv
		}
	}
	c.hub.Publish(ch)
}

// gvkOf returns the kind of obj; for a list, the kind of its items.
func (c *Client) gvkOf(obj runtime.Object) (schema.GroupVersionKind, error) {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return gvk, err
	}
	if _, isList := obj.(client.ObjectList); isList {
		gvk.Kind = kinds.TrimList(gvk.Kind)
	}
	return gvk, nil
}

func (c *Client) nextRV() string {
	c.rv++
	return strconv.FormatUint(c.rv, 10)
}

const nameChars = "bcdfghjklmnpqrstvwxz2456789"

func generateName(base string) string {
	b := make([]byte, 5)
	for i := range b {
		b[i] = nameChars[rand.IntN(len(nameChars))]
	}
	return base + string(b)
}

func notFound(gr schema.GroupResource, name string) error { return apierrors.NewNotFound(gr, name) }

// subNotFound is the NotFound of subresource sub of the object name.
func (c *Client) subNotFound(gvk schema.GroupVersionKind, sub, name string) error {
	gr := c.kinds.GroupResource(gvk)
	gr.Resource += "/" + sub
	return notFound(gr, name)
}

func nsOf(obj client.Object) string {
	if isNil(obj) {
		return ""
	}
	return obj.GetNamespace()
}

func nameOf(obj client.Object) string {
	if isNil(obj) {
		return ""
	}
	return obj.GetName()
}

func orDefault(manager string) string {
	if manager == "" {
		return defaultManager
	}
	return manager
}
