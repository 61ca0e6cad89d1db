package client_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/config"
	"github.com/kubeloop/kubeloop/client/fake"
)

// A client that talks to the cluster of the current kubeconfig.
func ExampleNew() {
	cfg, err := config.GetConfig()
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := client.New(cfg, client.Options{FieldOwner: "my-operator"})
	if err != nil {
		fmt.Println(err)
		return
	}
	var cm corev1.ConfigMap
	err = c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "settings"}, &cm)
	fmt.Println(client.IgnoreNotFound(err))
}

// The manager's client: reads from the cache, writes to the API server, and
// reads its own writes.
func ExampleNew_cache() {
	cfg, err := config.GetConfig()
	if err != nil {
		fmt.Println(err)
		return
	}
	// The manager's cache (a *cache.InformerCache) reads, reports its
	// progress and shares its objects: the client is told each.
	var cache interface {
		client.SharedReader
		client.CacheProgress
	}
	c, err := client.New(cfg, client.Options{Cache: &client.CacheOptions{
		Reader:                   cache,
		Progress:                 cache,
		Shared:                   cache,
		DisableFor:               []client.Object{&corev1.Secret{}}, // never cache Secrets
		ReadYourOwnWritesTimeout: 5 * time.Second,
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = c
}

// Custom resources without Go types are read and written as unstructured
// objects.
func ExampleClient_Get_unstructured() {
	c := fake.NewClientBuilder().Build()
	ctx := context.Background()
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "default", "name": "w"},
		"spec":     map[string]any{"size": int64(3)},
	}}
	if err := c.Create(ctx, w); err != nil {
		fmt.Println(err)
		return
	}
	got := &unstructured.Unstructured{}
	got.SetAPIVersion("example.com/v1")
	got.SetKind("Widget")
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "w"}, got); err != nil {
		fmt.Println(err)
		return
	}
	size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size")
	fmt.Println(got.GetName(), size)
	// Output: w 3
}

// MergeFrom sends only what changed since the copy was taken.
func ExampleMergeFrom() {
	c := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"},
		Data:       map[string]string{"mode": "slow", "keep": "me"},
	}).Build()
	ctx := context.Background()
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, &cm); err != nil {
		fmt.Println(err)
		return
	}
	before := cm.DeepCopy()
	cm.Data["mode"] = "fast"
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	data, _ := patch.Data(&cm)
	fmt.Println(string(data))
	if err := c.Patch(ctx, &cm, patch); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cm.Data["mode"], cm.Data["keep"])
	// Output:
	// {"data":{"mode":"fast"},"metadata":{"resourceVersion":"999"}}
	// fast me
}

// Server-side apply with a typed apply configuration: the field owner owns
// exactly the fields it sends.
func ExampleClient_Apply() {
	c := fake.NewClientBuilder().Build()
	cm := corev1ac.ConfigMap("settings", "default").WithData(map[string]string{"mode": "fast"})
	err := c.Apply(context.Background(), cm, client.FieldOwner("my-operator"), client.ForceOwnership)
	fmt.Println(err, *cm.Name, cm.Data["mode"])
	// Output: <nil> settings fast
}

// A JSON patch, sent as is.
func ExampleRawPatch() {
	c := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"},
		Data:       map[string]string{"mode": "slow"},
	}).Build()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}}
	patch := client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/data/mode","value":"fast"}]`))
	fmt.Println(c.Patch(context.Background(), cm, patch), cm.Data["mode"])
	// Output: <nil> fast
}

// IgnoreNotFound turns "not found" into success, for deletes and reads of
// objects that may be gone.
func ExampleIgnoreNotFound() {
	c := fake.NewClientBuilder().Build()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gone"}}
	err := c.Delete(context.Background(), cm)
	fmt.Println(apierrors.IsNotFound(err))
	fmt.Println(client.IgnoreNotFound(err))
	// Output:
	// true
	// <nil>
}

// A hot path reads the cached object itself: no copy is made, so the object
// is read-only. DeepCopy it to change it. From a reader that holds nothing,
// like this fake client, GetShared is a Get into a new object.
func ExampleGetShared() {
	c := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"},
		Data:       map[string]string{"mode": "fast"},
	}).Build()
	ctx := context.Background()

	cm, err := client.GetShared[*corev1.ConfigMap](ctx, c, client.ObjectKey{Namespace: "default", Name: "settings"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cm.Data["mode"])

	changed := cm.DeepCopy()
	changed.Data["mode"] = "safe"
	fmt.Println(c.Update(ctx, changed))
	// Output:
	// fast
	// <nil>
}
