package controllerutil_test

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/controller/controllerutil"
)

// CreateOrUpdate makes the object match, writing only when needed.
func ExampleCreateOrUpdate() {
	c := fake.NewClientBuilder().Build()
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}}
	for range 2 {
		result, err := controllerutil.CreateOrUpdate(ctx, c, cm, func() error {
			cm.Data = map[string]string{"mode": "fast"}
			return nil
		})
		fmt.Println(result, err)
	}
	// Output:
	// created <nil>
	// unchanged <nil>
}

// SetControllerReference marks a child as controlled by its owner, so the
// garbage collector deletes it with the owner.
func ExampleSetControllerReference() {
	c := fake.NewClientBuilder().Build()
	owner := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "1234"}}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-config"}}
	if err := controllerutil.SetControllerReference(owner, child, c.Scheme()); err != nil {
		fmt.Println(err)
		return
	}
	ref := child.OwnerReferences[0]
	fmt.Println(ref.APIVersion, ref.Kind, ref.Name, *ref.Controller)
	// Output: apps/v1 Deployment web true
}

// AddFinalizer reports whether an update is needed.
func ExampleAddFinalizer() {
	cm := &corev1.ConfigMap{}
	fmt.Println(controllerutil.AddFinalizer(cm, "example.com/cleanup"))
	fmt.Println(controllerutil.AddFinalizer(cm, "example.com/cleanup"))
	fmt.Println(controllerutil.RemoveFinalizer(cm, "example.com/cleanup"), cm.Finalizers)
	// Output:
	// true
	// false
	// true []
}
