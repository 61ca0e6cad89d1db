package client

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/internal/kinds"
)

// How the live client finds what a request needs about an object's kind:
// every request path (live, metadata, subresources) starts here.

// target is what a request needs about an object's kind.
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

// targetFor resolves obj's kind (a list's item kind for lists). Its errors
// name verb and the object: by kind when known, else by Go type.
func (c *liveClient) targetFor(verb string, obj runtime.Object, ns, name string) (*target, error) {
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
		return nil, opError(verb, gvk, ns, name, err)
	}
	return t, nil
}

func (c *liveClient) targetForGVK(gvk schema.GroupVersionKind, unstructured, metadataOnly bool) (*target, error) {
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
