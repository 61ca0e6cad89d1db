package cache_test

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
)

// A cache watching one namespace, with an index on a data key. Needs a
// cluster, so it has no output.
func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := &rest.Config{Host: "https://127.0.0.1:6443"}

	c, err := cache.New(cfg, cache.Options{DefaultNamespaces: map[string]cache.Config{"team-a": {}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := c.IndexField(ctx, &corev1.ConfigMap{}, "data.owner", func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["owner"]}
	}); err != nil {
		fmt.Println(err)
		return
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		fmt.Println("not synced:", c.Healthy())
		return
	}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, client.InNamespace("team-a"), client.MatchingFields{"data.owner": "alice"}); err != nil {
		fmt.Println(err)
	}
}

// Reads before Start fail with ErrCacheNotStarted rather than waiting.
func ExampleErrCacheNotStarted() {
	c, err := cache.New(&rest.Config{Host: "https://127.0.0.1:1"}, cache.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "web"}, &corev1.ConfigMap{})
	fmt.Println(errors.Is(err, &cache.ErrCacheNotStarted{}))
	fmt.Println(err)
	// Output:
	// true
	// get v1, Kind=ConfigMap default/web: cache: not started
}
