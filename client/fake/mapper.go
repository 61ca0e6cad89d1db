package fake

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
)

// How the fake knows a kind's scope, first answer wins:
//  1. the mapper given with WithRESTMapper;
//  2. the CustomResourceDefinitions given with WithObjects (typed or
//     unstructured, apiextensions.k8s.io v1 or v1beta1): their spec.scope;
//  3. the built-in kinds (the scheme's kinds from k8s.io/api, and the
//     cluster-scoped groups and kinds of the API server itself);
//  4. otherwise, as controller-runtime's fake, whatever the object or key
//     says: namespaced when it names a namespace, cluster-scoped when not.
//
// RESTMapper() answers from 1 to 3, then maps the scheme's other kinds as
// namespaced (the previous behaviour, which callers that only want a
// resource name rely on).

// firstMapper asks its mappers in order and returns the first answer that
// is not a no-match error. Unlike meta.MultiRESTMapper, a kind two mappers
// know is not ambiguous: the earlier mapper wins, so WithRESTMapper can
// override the scheme's guess.
type firstMapper []meta.RESTMapper

var _ meta.RESTMapper = firstMapper(nil)

func firstOf[T any](m firstMapper, ask func(meta.RESTMapper) (T, error)) (T, error) {
	var zero T
	var last error
	for _, r := range m {
		v, err := ask(r)
		if err == nil {
			return v, nil
		}
		if !meta.IsNoMatchError(err) {
			return zero, err
		}
		last = err
	}
	if last == nil {
		last = &meta.NoResourceMatchError{}
	}
	return zero, last
}

func (m firstMapper) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return firstOf(m, func(x meta.RESTMapper) (schema.GroupVersionKind, error) { return x.KindFor(r) })
}

func (m firstMapper) KindsFor(r schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return firstOf(m, func(x meta.RESTMapper) ([]schema.GroupVersionKind, error) { return x.KindsFor(r) })
}

func (m firstMapper) ResourceFor(r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return firstOf(m, func(x meta.RESTMapper) (schema.GroupVersionResource, error) { return x.ResourceFor(r) })
}

func (m firstMapper) ResourcesFor(r schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return firstOf(m, func(x meta.RESTMapper) ([]schema.GroupVersionResource, error) { return x.ResourcesFor(r) })
}

func (m firstMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	mapping, err := firstOf(m, func(x meta.RESTMapper) (*meta.RESTMapping, error) { return x.RESTMapping(gk, versions...) })
	if err != nil && meta.IsNoMatchError(err) {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return mapping, err
}

func (m firstMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return firstOf(m, func(x meta.RESTMapper) ([]*meta.RESTMapping, error) { return x.RESTMappings(gk, versions...) })
}

func (m firstMapper) ResourceSingularizer(resource string) (string, error) {
	return firstOf(m, func(x meta.RESTMapper) (string, error) { return x.ResourceSingularizer(resource) })
}

// crdGroupKind is the kind of CustomResourceDefinitions.
var crdGroupKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// crdMapper maps the kinds that the CustomResourceDefinitions among objs
// define, with their scopes and resource names. Objects of other kinds are
// skipped. It returns nil when objs hold no definition.
func (b *ClientBuilder) crdMapper(c *Client) (meta.RESTMapper, error) {
	var m *meta.DefaultRESTMapper
	for _, obj := range b.objects {
		if isNil(obj) {
			continue // add reports it
		}
		gvk, err := c.gvkOf(obj)
		if err != nil || gvk.GroupKind() != crdGroupKind {
			continue
		}
		u, err := c.toMap(obj, gvk)
		if err != nil {
			return nil, fmt.Errorf("fake: WithObjects: %w", opError("add", gvk, "", obj.GetName(), err))
		}
		if m == nil {
			m = meta.NewDefaultRESTMapper(nil)
		}
		if err := addCRD(m, u); err != nil {
			return nil, fmt.Errorf("fake: WithObjects: %w", opError("add", gvk, "", obj.GetName(), err))
		}
	}
	if m == nil {
		return nil, nil
	}
	return m, nil
}

// addCRD adds the kinds of the definition crd (its JSON map) to m.
func addCRD(m *meta.DefaultRESTMapper, crd map[string]any) error {
	group, _, _ := unstructured.NestedString(crd, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd, "spec", "names", "kind")
	plural, _, _ := unstructured.NestedString(crd, "spec", "names", "plural")
	singular, _, _ := unstructured.NestedString(crd, "spec", "names", "singular")
	scope, _, _ := unstructured.NestedString(crd, "spec", "scope")
	if group == "" || kind == "" || plural == "" {
		return fmt.Errorf("a CustomResourceDefinition needs spec.group, spec.names.kind and spec.names.plural")
	}
	var restScope meta.RESTScope
	switch scope {
	case "Namespaced":
		restScope = meta.RESTScopeNamespace
	case "Cluster":
		restScope = meta.RESTScopeRoot
	default:
		return fmt.Errorf("spec.scope %q is neither Namespaced nor Cluster", scope)
	}
	if singular == "" {
		singular = lower(kind)
	}
	var versions []string
	if vs, _, _ := unstructured.NestedSlice(crd, "spec", "versions"); len(vs) > 0 {
		for _, v := range vs {
			if vm, ok := v.(map[string]any); ok {
				if name, _ := vm["name"].(string); name != "" {
					versions = append(versions, name)
				}
			}
		}
	} else if v, _, _ := unstructured.NestedString(crd, "spec", "version"); v != "" {
		versions = []string{v} // apiextensions.k8s.io/v1beta1
	}
	if len(versions) == 0 {
		return fmt.Errorf("a CustomResourceDefinition needs at least one entry in spec.versions")
	}
	for _, v := range versions {
		gv := schema.GroupVersion{Group: group, Version: v}
		m.AddSpecific(gv.WithKind(kind), gv.WithResource(plural), gv.WithResource(singular), restScope)
	}
	return nil
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// scopeOf reports whether gvk is namespaced, and known false when no
// source of scope (1 to 3 above) knows the kind.
func (c *Client) scopeOf(gvk schema.GroupVersionKind) (namespaced, known bool) {
	if m, err := c.scopes.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		return m.Scope.Name() == meta.RESTScopeNameNamespace, true
	}
	if clusterScopedKind(gvk.GroupKind()) {
		return false, true
	}
	return false, false
}

// namespaced reports the scope of gvk; for a kind of unknown scope it
// takes the namespace given (ns) as the answer, as controller-runtime's
// fake stores objects under whatever namespace they name.
func (c *Client) namespaced(gvk schema.GroupVersionKind, ns string) bool {
	if namespaced, known := c.scopeOf(gvk); known {
		return namespaced
	}
	return ns != ""
}

// listScope drops the namespace of a list, watch or delete collection of
// a cluster-scoped kind: the namespace is ignored, as the real client
// never sends it.
func (c *Client) listScope(gvk schema.GroupVersionKind, o *client.ListOptions) {
	if o.Namespace != "" && !c.namespaced(gvk, o.Namespace) {
		o.Namespace = ""
	}
}
