package fake

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake/internal/objmap"
)

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
