package store

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// applyObjects is the number of ConfigMaps BenchmarkApply cycles through,
// as bench/e2e's -event-objects: each update replaces an object last
// touched 10,000 updates before.
const applyObjects = 10000

// BenchmarkApply is the informer's apply against the store (feed.apply):
// Get of the stored version, then Put of the new one. With lookup=put,
// only the Put: what a Put that hands back the replaced object would
// cost, the difference being the second lookup. With lookup=stored+put,
// the apply's Get is Stored, which skips the look among the last Puts.
func BenchmarkApply(b *testing.B) {
	for _, mode := range []string{"get+put", "stored+put", "put"} {
		b.Run("lookup="+mode, func(b *testing.B) {
			s := New()
			objs := make([]*corev1.ConfigMap, applyObjects)
			for i := range objs {
				objs[i] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("cm-%05d", i), ResourceVersion: "1"}}
				if err := s.Put(Key{Namespace: "bench", Name: objs[i].Name}, objs[i]); err != nil {
					b.Fatal(err)
				}
			}
			var found int
			b.ResetTimer()
			for i := range b.N {
				o := objs[i%applyObjects]
				k := Key{Namespace: o.Namespace, Name: o.Name}
				switch mode {
				case "get+put":
					if _, ok := s.Get(k.Namespace, k.Name); ok {
						found++
					}
				case "stored+put":
					if _, ok := s.Stored(k.Namespace, k.Name); ok {
						found++
					}
				}
				if err := s.Put(k, o); err != nil {
					b.Fatal(err)
				}
			}
			if mode != "put" && found != b.N {
				b.Fatalf("found %d of %d stored objects", found, b.N)
			}
		})
	}
}

// TestStored checks that Stored finds what Get finds: an object just Put
// (which Get finds among the last Puts), one Put before many others, and
// nothing once deleted.
func TestStored(t *testing.T) {
	s := New()
	first := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "first"}}
	require.NoError(t, s.Put(Key{Namespace: "ns", Name: "first"}, first))
	got, ok := s.Stored("ns", "first")
	require.True(t, ok, "ns/first just Put")
	assert.Same(t, first, got)
	for i := range 2 * recentSize {
		name := fmt.Sprintf("other-%d", i)
		require.NoError(t, s.Put(Key{Namespace: "ns", Name: name}, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}))
	}
	got, ok = s.Stored("ns", "first")
	require.True(t, ok, "ns/first Put before %d others", 2*recentSize)
	assert.Same(t, first, got)
	require.NoError(t, s.Delete(Key{Namespace: "ns", Name: "first"}))
	_, ok = s.Stored("ns", "first")
	assert.False(t, ok, "ns/first deleted")
	_, ok = s.Stored("other-namespace", "first")
	assert.False(t, ok, "a namespace with no objects")
}
