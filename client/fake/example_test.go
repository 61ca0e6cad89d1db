package fake_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
