package ryow

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeloop/kubeloop/client/apiutil"
)

func newRouter() *Router {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	return &Router{Mapper: func() meta.RESTMapper { return m }, Scheme: clientgoscheme.Scheme,
		GVKFor: func(obj runtime.Object) (schema.GroupVersionKind, error) {
			return apiutil.GVKForObject(obj, clientgoscheme.Scheme)
		},
		Disabled: map[schema.GroupKind]bool{{Kind: "Secret"}: true}}
}

func TestRoute(t *testing.T) {
	r := newRouter()
	for range 2 { // the second answer is remembered
		useCache, gvk, sc := r.Route(&corev1.ConfigMap{})
		assert.True(t, useCache)
		assert.Equal(t, "ConfigMap", gvk.Kind)
		assert.Equal(t, ScopeNamespaced, sc)
	}
	useCache, gvk, _ := r.Route(&corev1.ConfigMapList{})
	assert.True(t, useCache)
	assert.Equal(t, "ConfigMap", gvk.Kind, "a list's item kind")
	useCache, _, _ = r.Route(&corev1.Secret{})
	assert.False(t, useCache, "a disabled kind")
}

func TestKeys(t *testing.T) {
	r := newRouter()
	tr := New(0)
	nsGVK := schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	k := r.WriteKey(nsGVK, "ignored", "n")
	assert.Equal(t, "", k.Namespace, "a cluster-scoped kind is remembered without a namespace")
	tr.Record(k, Entry{State: Present, RV: 3})
	got, tracked := r.ReadKey(tr, nsGVK, ScopeUnknown, types.NamespacedName{Namespace: "x", Name: "n"})
	assert.True(t, tracked, "found without the key's namespace when the scope is unknown")
	assert.Equal(t, k, got)
	assert.Equal(t, 1, tr.Size())
}

func ExampleTracker_Settle() {
	tr := New(0)
	k := Key{GK: schema.GroupKind{Kind: "ConfigMap"}, Namespace: "ns", Name: "web"}
	tr.Record(k, Entry{State: Present, RV: 12})
	cached := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "12"}}
	caughtUp, err := tr.Settle(context.Background(), k, func() (metav1.Object, error) { return cached, nil }, nil, nil)
	fmt.Println(caughtUp, err, tr.Size())
	// Output: true <nil> 0
}
