package fake_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
)

// A fake client seeded with objects behaves like the API server: a stale
// update is a conflict.
func ExampleNewClientBuilder() {
	c := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"},
	}).Build()
	ctx := context.Background()

	var cm corev1.ConfigMap
	_ = c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, &cm)
	stale := cm.DeepCopy()
	cm.Data = map[string]string{"a": "1"}
	fmt.Println(c.Update(ctx, &cm))
	stale.Data = map[string]string{"a": "2"}
	fmt.Println(apierrors.IsConflict(c.Update(ctx, stale)))
	// Output:
	// <nil>
	// true
}

// A cluster-scoped custom kind, declared in a REST mapper: a namespace set
// on its objects or keys is ignored, as the API server does. Build returns
// a client.WithWatch and never panics; a bad setup surfaces on every call.
func ExampleClientBuilder_WithRESTMapper() {
	gvk := schema.GroupVersionKind{Group: "example.dev", Version: "v1", Kind: "Tenant"}
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(gvk, meta.RESTScopeRoot)
	tenant := &unstructured.Unstructured{}
	tenant.SetGroupVersionKind(gvk)
	tenant.SetName("acme")
	tenant.SetNamespace("ignored")
	c := fake.NewClientBuilder().WithRESTMapper(m).WithObjects(tenant).Build()

	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(gvk)
	err := c.Get(context.Background(), client.ObjectKey{Namespace: "anything", Name: "acme"}, got)
	fmt.Printf("%v %q\n", err, got.GetNamespace())

	bad := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{}).Build()
	fmt.Println(bad.List(context.Background(), &corev1.ConfigMapList{}))
	// Output:
	// <nil> ""
	// fake: WithObjects: add v1, Kind=ConfigMap: client: name is required (the fake client was not built; BuildClient returns this error)
}
