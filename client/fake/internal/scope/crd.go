package scope

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CRDGroupKind is the kind of CustomResourceDefinitions.
var CRDGroupKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// AddCRD adds to m the kinds that crd (a CustomResourceDefinition as its
// JSON map, apiextensions.k8s.io v1 or v1beta1) defines, with their scope
// and resource names. It says what the definition lacks.
func AddCRD(m *meta.DefaultRESTMapper, crd map[string]any) error {
	group, _, _ := unstructured.NestedString(crd, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd, "spec", "names", "kind")
	plural, _, _ := unstructured.NestedString(crd, "spec", "names", "plural")
	singular, _, _ := unstructured.NestedString(crd, "spec", "names", "singular")
	scope, _, _ := unstructured.NestedString(crd, "spec", "scope")
	if group == "" || kind == "" || plural == "" {
		return errors.New("a CustomResourceDefinition needs spec.group, spec.names.kind and spec.names.plural")
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
		singular = strings.ToLower(kind)
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
		return errors.New("a CustomResourceDefinition needs at least one entry in spec.versions")
	}
	for _, v := range versions {
		gv := schema.GroupVersion{Group: group, Version: v}
		m.AddSpecific(gv.WithKind(kind), gv.WithResource(plural), gv.WithResource(singular), restScope)
	}
	return nil
}
