package cache_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/cache"
)

// Sizes lists every informer of the cache with the objects it holds, per
// namespace. This cache has not started (it needs a cluster), so its one
// informer holds nothing yet and is listed once.
func ExampleInformerCache_Sizes() {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	c, err := cache.New(&rest.Config{Host: "https://127.0.0.1:6443"}, cache.Options{Mapper: mapper})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := c.GetInformer(context.Background(), &corev1.ConfigMap{}); err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range c.Sizes() {
		fmt.Printf("%s %s (%s) namespace=%q: %d objects, about %d bytes\n",
			s.Kind, s.Version, s.Shape, s.Namespace, s.Objects, s.Bytes)
	}
	// Output:
	// ConfigMap v1 (typed) namespace="": 0 objects, about 0 bytes
}
