package client_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
)

// The wrappers compose over any client; here the fake one.
func ExampleNewNamespacedClient() {
	ctx := context.Background()
	base := fake.NewClientBuilder().Build()

	// Writes and reads in "team-a" without naming the namespace, with one
	// field manager for every write.
	c := client.WithFieldOwner(client.NewNamespacedClient(base, "team-a"), "team-a-operator")
	_ = c.Apply(ctx, corev1ac.ConfigMap("settings", "").WithData(map[string]string{"mode": "fast"}))
	var cm corev1.ConfigMap
	_ = base.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "settings"}, &cm)
	fmt.Println(cm.Namespace, cm.Data["mode"])

	// A dry run validates and answers, and stores nothing.
	dry := client.NewDryRunClient(base)
	err := dry.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "draft"}})
	fmt.Println(err)
	err = base.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "draft"}, &cm)
	fmt.Println(apierrors.IsNotFound(err))
	// Output:
	// team-a fast
	// <nil>
	// true
}
