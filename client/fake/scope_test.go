package fake_test

import (
	"context"
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/client/interceptor"
)

// Thing is a custom resource with Go types, registered in the tests'
// scheme; its scope comes from the test (a mapper, a CRD, or nothing).
type Thing struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              map[string]string `json:"spec,omitempty"`
}

func (in *Thing) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = maps.Clone(in.Spec)
	return &out
}

type ThingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Thing `json:"items"`
}

func (in *ThingList) DeepCopyObject() runtime.Object {
	out := *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Thing, len(in.Items))
	for i := range in.Items {
		out.Items[i] = *in.Items[i].DeepCopyObject().(*Thing)
	}
	return &out
}

var thingGVK = schema.GroupVersionKind{Group: "example.kubeloop.dev", Version: "v1", Kind: "Thing"}

func thingScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	s.AddKnownTypes(thingGVK.GroupVersion(), &Thing{}, &ThingList{})
	metav1.AddToGroupVersion(s, thingGVK.GroupVersion())
	return s
}

// TestClusterScopedKindIgnoresNamespace: what the scaffolded controller
// tests do first (a Namespace whose metadata.namespace is set) works on
// every verb, as on the API server, and the object comes back without it.
func TestClusterScopedKindIgnoresNamespace(t *testing.T) {
	ctx := t.Context()
	c := fake.NewClientBuilder().
		WithObjects(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "given", Namespace: "x"}}).
		Build()

	var given rbacv1.ClusterRole
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "given"}, &given))
	assert.Empty(t, given.Namespace, "WithObjects drops the namespace")

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "x"}}
	require.NoError(t, c.Create(ctx, ns))
	assert.Empty(t, ns.Namespace, "the created object is the server's answer")

	var got corev1.Namespace
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "x", Name: "x"}, &got))
	assert.Equal(t, "x", got.Name)
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "x"}, &got))

	got.Namespace = "elsewhere"
	got.Labels = map[string]string{"a": "1"}
	require.NoError(t, c.Update(ctx, &got))
	assert.Empty(t, got.Namespace)

	before := got.DeepCopy()
	got.Namespace = "elsewhere"
	got.Labels["b"] = "2"
	require.NoError(t, c.Patch(ctx, &got, client.MergeFrom(before)))
	assert.Equal(t, "2", got.Labels["b"])

	got.Namespace = "elsewhere"
	got.Status.Phase = corev1.NamespaceActive
	require.NoError(t, c.Status().Update(ctx, &got))

	ac := corev1ac.Namespace("applied").WithNamespace("elsewhere").WithLabels(map[string]string{"c": "3"})
	require.NoError(t, c.Apply(ctx, ac, client.FieldOwner("test")))
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "applied"}, &got))
	assert.Equal(t, "3", got.Labels["c"])

	var list corev1.NamespaceList
	require.NoError(t, c.List(ctx, &list, client.InNamespace("elsewhere")))
	assert.Len(t, list.Items, 2, "InNamespace is ignored for a cluster-scoped kind")

	require.NoError(t, c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "applied", Namespace: "elsewhere"}}))
	assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: "applied"}, &got)))

	// DeleteAllOf: the namespace does not narrow a cluster-scoped delete.
	err := c.DeleteAllOf(ctx, &rbacv1.ClusterRole{}, client.InNamespace("x"))
	assert.ErrorIs(t, err, client.ErrDeleteEverything)
	require.NoError(t, c.DeleteAllOf(ctx, &rbacv1.ClusterRole{}, client.InNamespace("x"), client.DeleteEverything))
	assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: "given"}, &given)))
}

// TestCustomKindOfUnknownScope: a custom kind nothing maps is what each
// object says, as in controller-runtime's fake; one given without a
// namespace (a cluster-scoped custom resource) builds and works.
func TestCustomKindOfUnknownScope(t *testing.T) {
	ctx := t.Context()
	c, err := fake.NewClientBuilder().WithScheme(thingScheme(t)).
		WithObjects(&Thing{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, &Thing{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}).
		BuildClient()
	require.NoError(t, err)
	var got Thing
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "a"}, &got))
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "b"}, &got))
	require.NoError(t, c.Create(ctx, &Thing{ObjectMeta: metav1.ObjectMeta{Name: "c"}}))
	var list ThingList
	require.NoError(t, c.List(ctx, &list))
	assert.Len(t, list.Items, 3)
}

// TestCustomClusterScopedKindFromMapper: a kind the WithRESTMapper mapper
// calls cluster-scoped is cluster-scoped, even though the scheme has it.
func TestCustomClusterScopedKindFromMapper(t *testing.T) {
	ctx := t.Context()
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(thingGVK, meta.RESTScopeRoot)
	c, err := fake.NewClientBuilder().WithScheme(thingScheme(t)).WithRESTMapper(m).
		WithObjects(&Thing{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "x"}}).
		BuildClient()
	require.NoError(t, err)
	namespaced, err := c.IsObjectNamespaced(&Thing{})
	require.NoError(t, err)
	assert.False(t, namespaced)

	var got Thing
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "a"}, &got))
	assert.Empty(t, got.Namespace)
	require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: "y", Name: "a"}, &got))

	b := &Thing{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "y"}, Spec: map[string]string{"k": "v"}}
	require.NoError(t, c.Create(ctx, b))
	assert.Empty(t, b.Namespace)
	b.Spec["k"] = "w"
	b.Namespace = "z"
	require.NoError(t, c.Update(ctx, b))
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "b"}, &got))
	assert.Equal(t, "w", got.Spec["k"])

	var list ThingList
	require.NoError(t, c.List(ctx, &list, client.InNamespace("y")))
	assert.Len(t, list.Items, 2)

	require.NoError(t, c.Delete(ctx, &Thing{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "q"}}))
	assert.True(t, apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Name: "b"}, &got)))
}

func crd(group, kind, plural, scope string, versions ...string) *unstructured.Unstructured {
	vs := make([]any, len(versions))
	for i, v := range versions {
		vs[i] = map[string]any{"name": v, "served": true, "storage": i == 0}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group, "scope": scope, "versions": vs,
			"names": map[string]any{"kind": kind, "plural": plural, "listKind": kind + "List"},
		},
	}}
	return u
}

// TestScopeFromCRDs: the CustomResourceDefinitions given with WithObjects
// tell the scope and resource of the kinds they define.
func TestScopeFromCRDs(t *testing.T) {
	ctx := t.Context()
	widget := &unstructured.Unstructured{}
	widget.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.kubeloop.dev", Version: "v1", Kind: "ClusterWidget"})
	widget.SetName("w")
	widget.SetNamespace("ignored")
	c, err := fake.NewClientBuilder().WithScheme(thingScheme(t)).
		WithObjects(widget, crd("example.kubeloop.dev", "ClusterWidget", "clusterwidgets", "Cluster", "v1"),
			crd("example.kubeloop.dev", "Thing", "things", "Namespaced", "v1")).
		BuildClient()
	require.NoError(t, err)

	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(widget.GroupVersionKind())
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "w"}, got))
	assert.Empty(t, got.GetNamespace())
	mapping, err := c.RESTMapper().RESTMapping(widget.GroupVersionKind().GroupKind(), "v1")
	require.NoError(t, err)
	assert.Equal(t, "clusterwidgets", mapping.Resource.Resource)
	assert.Equal(t, meta.RESTScopeNameRoot, mapping.Scope.Name())

	// Thing is namespaced now: one without a namespace is kept under "",
	// as controller-runtime's fake does.
	require.NoError(t, c.Create(ctx, &Thing{ObjectMeta: metav1.ObjectMeta{Name: "t"}}))
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "t"}, &Thing{}))

	var crds unstructured.UnstructuredList
	crds.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinitionList"})
	require.NoError(t, c.List(ctx, &crds))
	assert.Len(t, crds.Items, 2, "the definitions are objects too")

	bad := crd("example.kubeloop.dev", "Bad", "bads", "Sideways", "v1")
	_, err = fake.NewClientBuilder().WithObjects(bad).BuildClient()
	assert.ErrorContains(t, err, `spec.scope "Sideways"`)
	assert.ErrorContains(t, err, "bads.example.kubeloop.dev")
}

// TestBuildWithInterceptorsWatches: Build is a client.WithWatch with or
// without interceptors.
func TestBuildWithInterceptorsWatches(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var c client.WithWatch = fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{}).Build()
	w, err := c.Watch(ctx, &corev1.ConfigMapList{})
	require.NoError(t, err)
	defer w.Stop()
	require.NoError(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "cm"}}))
	ev := <-w.ResultChan()
	assert.Equal(t, watch.Added, ev.Type)
}

// TestNamespacedWithoutNamespace: unit tests that seed and read namespaced
// objects without a namespace work as on controller-runtime's fake: the
// object is kept under "", found by a key without a namespace, listed,
// updated and deleted. A namespace that is not a valid name is still
// refused, and a missing name too.
func TestNamespacedWithoutNamespace(t *testing.T) {
	ctx := t.Context()
	seeded := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "configmap"}, Data: map[string]string{"k": "v"}}
	c, err := fake.NewClientBuilder().WithObjects(seeded).BuildClient()
	require.NoError(t, err)

	var got corev1.ConfigMap
	require.NoError(t, c.Get(ctx, client.ObjectKey{Name: "configmap"}, &got))
	assert.Equal(t, "v", got.Data["k"])
	assert.Empty(t, got.Namespace)

	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "test-volume"}}
	require.NoError(t, c.Create(ctx, pvc))
	got.Data["k"] = "w"
	require.NoError(t, c.Update(ctx, &got))

	var list corev1.ConfigMapList
	require.NoError(t, c.List(ctx, &list))
	require.Len(t, list.Items, 1)
	assert.Equal(t, "w", list.Items[0].Data["k"])

	require.NoError(t, c.Delete(ctx, pvc))
	err = c.Get(ctx, client.ObjectKey{Name: "test-volume"}, &corev1.PersistentVolumeClaim{})
	assert.True(t, apierrors.IsNotFound(err), "deleted: %v", err)

	assert.ErrorIs(t, c.Get(ctx, client.ObjectKey{Namespace: "Not_Valid", Name: "x"}, &corev1.ConfigMap{}), client.ErrNamespaceInvalid)
	assert.ErrorIs(t, c.Create(ctx, &corev1.ConfigMap{}), client.ErrNameRequired)
}
