package cache

import (
	"context"
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/client"
)

const (
	waitFor = 30 * time.Second
	tick    = 10 * time.Millisecond
)

func unsafeStringData(s string) *byte { return unsafe.StringData(s) }

// benchCache returns a synced cache of n ConfigMaps in 10 namespaces.
func benchCache(b *testing.B, n int) *InformerCache {
	c, src := newFakeCache(b, Options{})
	s := src.source(cmGVK)
	for i := range n {
		s.Add(configMap(fmt.Sprint("ns-", i%10), fmt.Sprint("cm-", i), i))
	}
	ctx := context.Background()
	require.Eventually(b, func() bool {
		var l corev1.ConfigMapList
		return c.List(ctx, &l, client.UnsafeDisableDeepCopy) == nil && len(l.Items) == n
	}, waitFor, tick)
	return c
}

func BenchmarkGet(b *testing.B) {
	c := benchCache(b, 10000)
	ctx := context.Background()
	key := client.ObjectKey{Namespace: "ns-3", Name: "cm-4203"}
	for _, tc := range []struct {
		name string
		opts []client.GetOption
	}{
		{"copy", nil},
		{"nocopy", []client.GetOption{client.UnsafeDisableDeepCopy}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var cm corev1.ConfigMap
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Get(ctx, key, &cm, tc.opts...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkListNamespace(b *testing.B) {
	c := benchCache(b, 10000)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts []client.ListOption
	}{
		{"copy", []client.ListOption{client.InNamespace("ns-3")}},
		{"nocopy", []client.ListOption{client.InNamespace("ns-3"), client.UnsafeDisableDeepCopy}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var l corev1.ConfigMapList
				if err := c.List(ctx, &l, tc.opts...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
