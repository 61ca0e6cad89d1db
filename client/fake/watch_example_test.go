package fake_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
)

// A test watches the fake client as it would the API server: existing
// objects arrive as ADDED, then every change.
func ExampleClient_Watch() {
	ctx := context.Background()
	c, _ := fake.NewClientBuilder().WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}},
	).BuildClient()
	w, err := c.Watch(ctx, &corev1.ConfigMapList{}, client.InNamespace("default"))
	if err != nil {
		panic(err)
	}
	defer w.Stop()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "flags"}}
	_ = c.Create(ctx, cm)
	cm.Data = map[string]string{"debug": "true"}
	_ = c.Update(ctx, cm)
	_ = c.Delete(ctx, cm)
	for range 4 {
		ev := <-w.ResultChan()
		fmt.Println(ev.Type, ev.Object.(*corev1.ConfigMap).Name)
	}
	// Output:
	// ADDED settings
	// ADDED flags
	// MODIFIED flags
	// DELETED flags
}
