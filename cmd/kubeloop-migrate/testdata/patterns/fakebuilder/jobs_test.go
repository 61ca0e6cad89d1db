package fakebuilder

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"example.com/patterns/fakecluster"
)

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := fakecluster.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestJobStatusWithTheOperatorsKindDeclared(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "load-master"}}
	c := fake.NewClientBuilder().
		WithScheme(newScheme(t)).
		WithObjects(job).
		WithStatusSubresource(&fakecluster.ClusterWidget{}).
		Build()
	ctx := context.Background()
	key := client.ObjectKeyFromObject(job)
	if err := MarkActive(ctx, c, key, 1); err != nil {
		t.Fatalf("a Job keeps its status subresource: %v", err)
	}
	got := &batchv1.Job{}
	if err := c.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Active != 1 {
		t.Fatalf("status.active %d, want 1", got.Status.Active)
	}
}

func TestWithRuntimeObjectsAndWithLists(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "token"}}
	var objs []runtime.Object
	objs = append(objs, secret)
	lists := &corev1.ConfigMapList{Items: []corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b"}},
	}}
	c := fake.NewClientBuilder().WithRuntimeObjects(objs...).WithLists(lists).Build()
	ctx := context.Background()
	if err := c.Get(ctx, client.ObjectKeyFromObject(secret), &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
	cms := &corev1.ConfigMapList{}
	if err := c.List(ctx, cms, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	if len(cms.Items) != 2 {
		t.Fatalf("listed %d config maps, want 2", len(cms.Items))
	}
}
