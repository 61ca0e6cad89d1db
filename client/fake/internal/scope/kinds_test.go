package scope_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeloop/kubeloop/client/fake/internal/scope"
)

var (
	widget = schema.GroupVersionKind{Group: "example.dev", Version: "v1", Kind: "Widget"}
	gadget = schema.GroupVersionKind{Group: "example.dev", Version: "v1", Kind: "Gadget"}
)

func crd(kind, plural, scopeName string) map[string]any {
	return map[string]any{"spec": map[string]any{
		"group": "example.dev", "scope": scopeName,
		"names":    map[string]any{"kind": kind, "plural": plural},
		"versions": []any{map[string]any{"name": "v1"}},
	}}
}

func TestScopeSources(t *testing.T) {
	user := meta.NewDefaultRESTMapper(nil)
	user.Add(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}, meta.RESTScopeRoot)
	crds := meta.NewDefaultRESTMapper(nil)
	require.NoError(t, scope.AddCRD(crds, crd("Widget", "widgets", "Cluster")))
	k := scope.New(clientgoscheme.Scheme, user, crds)

	tests := []struct {
		name           string
		gvk            schema.GroupVersionKind
		ns             string
		wantNamespaced bool
	}{
		{name: "built-in namespaced", gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, ns: "", wantNamespaced: true},
		{name: "built-in cluster-scoped", gvk: schema.GroupVersionKind{Version: "v1", Kind: "Node"}, ns: "ns"},
		{name: "the user's mapper wins", gvk: schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}, ns: "ns"},
		{name: "a CRD's scope", gvk: widget, ns: "ns"},
		{name: "unknown with a namespace", gvk: gadget, ns: "ns", wantNamespaced: true},
		{name: "unknown without one", gvk: gadget, ns: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantNamespaced, k.Namespaced(tt.gvk, tt.ns))
		})
	}
	assert.Equal(t, schema.GroupResource{Group: "example.dev", Resource: "widgets"}, k.GroupResource(widget), "the CRD's plural")
	assert.Equal(t, schema.GroupResource{Group: "example.dev", Resource: "gadgets"}, k.GroupResource(gadget), "a guess")
}

func TestStatusGenerationBuiltIn(t *testing.T) {
	k := scope.New(clientgoscheme.Scheme, nil, nil)
	pod, cm := schema.GroupKind{Kind: "Pod"}, schema.GroupKind{Kind: "ConfigMap"}
	assert.True(t, k.HasStatus(pod))
	assert.False(t, k.HasStatus(cm))
	assert.False(t, k.HasStatus(widget.GroupKind()))
	k.AddStatus(widget.GroupKind())
	assert.True(t, k.HasStatus(widget.GroupKind()))

	assert.True(t, k.Generation(pod))
	assert.False(t, k.Generation(cm), "no spec, no generation")
	assert.True(t, k.Generation(widget.GroupKind()), "custom resources have one")

	assert.NotNil(t, k.BuiltIn(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}))
	assert.Nil(t, k.BuiltIn(widget))
}

func TestRESTMapperMapsTheSchemesOtherKinds(t *testing.T) {
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(gadget, &metaObject{})
	k := scope.New(s, nil, nil)
	_, known := k.Known(gadget)
	assert.False(t, known, "a scheme kind outside k8s.io/api has no known scope")
	m, err := k.RESTMapper().RESTMapping(gadget.GroupKind(), "v1")
	require.NoError(t, err, "but RESTMapper maps it")
	assert.Equal(t, meta.RESTScopeNameNamespace, m.Scope.Name())
	_, err = k.RESTMapper().RESTMapping(schema.GroupKind{Group: "nope.dev", Kind: "Nope"})
	assert.True(t, meta.IsNoMatchError(err), "a kind nobody knows: %v", err)
}

func TestAddCRDErrors(t *testing.T) {
	m := meta.NewDefaultRESTMapper(nil)
	assert.EqualError(t, scope.AddCRD(m, map[string]any{}), "a CustomResourceDefinition needs spec.group, spec.names.kind and spec.names.plural")
	assert.EqualError(t, scope.AddCRD(m, crd("Widget", "widgets", "Galaxy")), `spec.scope "Galaxy" is neither Namespaced nor Cluster`)
	noVersions := crd("Widget", "widgets", "Namespaced")
	delete(noVersions["spec"].(map[string]any), "versions")
	assert.EqualError(t, scope.AddCRD(m, noVersions), "a CustomResourceDefinition needs at least one entry in spec.versions")
	noVersions["spec"].(map[string]any)["version"] = "v1beta1"
	require.NoError(t, scope.AddCRD(m, noVersions), "v1beta1's spec.version")
	_, err := m.RESTMapping(widget.GroupKind(), "v1beta1")
	assert.NoError(t, err)
}
