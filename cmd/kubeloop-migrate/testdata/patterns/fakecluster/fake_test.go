package fakecluster

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func widget(name, tier string) *ClusterWidget {
	return &ClusterWidget{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: ClusterWidgetSpec{Tier: tier}}
}

func TestClusterScopedWithARESTMapper(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{GroupVersion})
	mapper.Add(GroupVersion.WithKind("ClusterWidget"), meta.RESTScopeRoot)

	c := fake.NewClientBuilder().
		WithScheme(newScheme(t)).
		WithRESTMapper(mapper).
		WithObjects(widget("gold", "1"), widget("silver", "2")).
		Build()

	namespaced, err := c.IsObjectNamespaced(&ClusterWidget{})
	if err != nil {
		t.Fatal(err)
	}
	if namespaced {
		t.Fatal("the RESTMapper says ClusterWidget is cluster-scoped")
	}

	ctx := context.Background()
	got := &ClusterWidget{}
	if err := c.Get(ctx, client.ObjectKey{Name: "gold"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Tier != "1" {
		t.Fatalf("tier %q", got.Spec.Tier)
	}
	list := &ClusterWidgetList{}
	if err := c.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 {
		t.Fatalf("listed %d widgets, want 2", len(list.Items))
	}

	got.Spec.Tier = "0"
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, widget("silver", "")); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, list); err != nil || len(list.Items) != 1 || list.Items[0].Spec.Tier != "0" {
		t.Fatalf("after update and delete: %v %+v", err, list.Items)
	}
}

func TestClusterScopedWithoutARESTMapper(t *testing.T) {
	c := fake.NewClientBuilder().
		WithScheme(newScheme(t)).
		WithObjects(widget("gold", "1")).
		Build()

	ctx := context.Background()
	got := &ClusterWidget{}
	if err := c.Get(ctx, client.ObjectKey{Name: "gold"}, got); err != nil {
		t.Fatalf("get a cluster-scoped object seeded with WithObjects: %v", err)
	}
	if got.Spec.Tier != "1" {
		t.Fatalf("tier %q", got.Spec.Tier)
	}
	list := &ClusterWidgetList{}
	if err := c.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("listed %d widgets, want 1", len(list.Items))
	}
	if err := c.Create(ctx, widget("bronze", "3")); err != nil {
		t.Fatal(err)
	}
}
