package client

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// copyReader serves one ConfigMap, deep copied as the cache does, or
// shared when share is set (to measure what the client adds alone).
type copyReader struct {
	Reader
	cm    *corev1.ConfigMap
	share bool
}

func (r copyReader) Get(_ context.Context, _ ObjectKey, obj Object, _ ...GetOption) error {
	if r.share {
		*obj.(*corev1.ConfigMap) = *r.cm
		return nil
	}
	*obj.(*corev1.ConfigMap) = *r.cm.DeepCopy()
	return nil
}

// BenchmarkCachedGet measures the manager's client's cached Get of a typed
// object around the cache's own work (here a deep copy): kind lookup,
// read-your-own-writes check.
func BenchmarkCachedGet(b *testing.B) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "config-1", ResourceVersion: "7",
		Labels: map[string]string{"app": "bench"}}, Data: map[string]string{"key": "value"}}
	for _, share := range []bool{false, true} {
		name := "copy"
		if share {
			name = "nocopy"
		}
		b.Run(name, func(b *testing.B) {
			c, err := New(&rest.Config{Host: "http://127.0.0.1:1"}, Options{Cache: &CacheOptions{Reader: copyReader{cm: cm, share: share}}})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			key := ObjectKey{Namespace: "default", Name: "config-1"}
			var out corev1.ConfigMap
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Get(ctx, key, &out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
